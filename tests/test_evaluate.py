import json

from attn_demo.evaluate import main, score


def test_score_of_perfect_output_is_100_with_buckets_adding_up():
    sources = ["Go.", "I see the red cat.", "one two three four five six seven eight nine ten eleven twelve"]
    references = ["Va !", "Je vois le chat rouge.", "un deux trois quatre cinq six sept huit neuf dix onze douze"]
    result = score(sources, references, references)
    assert result["bleu"] == 100.0 and result["chrf"] == 100.0 and result["n"] == 3
    assert result["by_length"] == {"1-5": {"n": 2, "bleu": 100.0}, "11-15": {"n": 1, "bleu": 100.0}}
    assert score(sources, ["", "", ""], references)["bleu"] == 0.0


def test_cli_json_on_a_checkpoint(toy_checkpoint, toy_tsv, tmp_path, capsys):
    data = tmp_path / "eval.tsv"
    data.write_text(toy_tsv.read_text(encoding="utf-8") + "the red cat 😀\tle chat rouge\n", encoding="utf-8")
    main([str(toy_checkpoint), "--data", str(data), "--beam", "2", "--json"])
    result = json.loads(capsys.readouterr().out)
    assert set(result) >= {"bleu", "chrf", "n", "by_length"}
    assert result["n"] == len(data.read_text(encoding="utf-8").splitlines()) and result["refused"] == 1
    assert 0.0 <= result["bleu"] <= 100.0
