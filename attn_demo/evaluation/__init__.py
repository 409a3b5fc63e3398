"""Scoring a checkpoint (BLEU, chrF, alignment error, attribution) and timing its translations; the commands write the card."""
