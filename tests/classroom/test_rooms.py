"""The rooms of "Predict, then reveal": votes, reveals, moves, and every refusal with its message, each rule
on both stores (this process's memory, and a real redis-server of the tests' own)."""
import asyncio

import pytest
import redis

from attn_demo.classroom import rooms as classroom
from attn_demo.classroom.rooms import BadVote, NoAttention, NoSuchRoom, Rooms, RoomsDown, TooMany, WrongKey
from attn_demo.classroom.stores import READ_AGAIN_S, MemoryStore, RedisStore
from benchmarks.server import free_port

ENGLISH = ["▁the", "▁red", "▁cat", "</s>"]
FRENCH = ["▁le", "▁chat", "▁rouge", "</s>"]
ALPHA = [[0.7, 0.1, 0.1, 0.1],  # le ← the
         [0.1, 0.1, 0.7, 0.1],  # chat ← cat
         [0.1, 0.6, 0.2, 0.1],  # rouge ← red
         [0.1, 0.1, 0.1, 0.7]]  # </s> ← </s>
ALICE, BOB, CAROL = "alice-phone-1", "bob-phone-22", "carol-phone-3"

pytestmark = pytest.mark.anyio  # each test a coroutine, as the server's loop calls the rooms


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


@pytest.fixture
def clock():
    return Clock()


def redis_store(url: str) -> RedisStore:
    """A store on the tests' Redis, emptied: each test starts with no rooms."""
    redis.Redis.from_url(url).flushdb()
    return RedisStore(url)


@pytest.fixture(params=["memory", "redis"])
def store(request):
    return MemoryStore() if request.param == "memory" else redis_store(request.getfixturevalue("redis_url"))


@pytest.fixture
def rooms(store, clock):
    return Rooms(store, clock=clock)


@pytest.fixture
async def room(rooms):
    return await rooms.open(ENGLISH, FRENCH, ALPHA, "bahdanau-en-fr")


async def snapshot(rooms, code):
    """Everything the store keeps of the room, as stored."""
    return await rooms.store.read(code, rooms.clock())


async def test_a_room_code_is_short_unambiguous_and_the_key_is_not_in_any_view(rooms, room):
    code, key = room
    assert len(code) == classroom.CODE_LENGTH and set(code) <= set(classroom.CODE_ALPHABET)
    assert not set("01OIL") & set(classroom.CODE_ALPHABET)
    assert len(key) >= 24 and key not in repr(await rooms.state(code)) + repr(await rooms.tally(code))
    assert await rooms.state(code.lower()) == await rooms.state(f" {code} ")  # typed on a phone


async def test_a_phone_sees_the_sentence_the_french_so_far_and_no_votes_before_the_reveal(rooms, room):
    code, key = room
    await rooms.vote(code, ALICE, 1, 0)
    state = await rooms.state(code)
    assert (state["step"], state["steps"], state["english"], state["french"]) == (1, 4, ENGLISH, [])
    assert state["revealed"] is False and state["alpha"] is None and state["counts"] is None
    await rooms.reveal(code, key)
    await rooms.next(code, key)
    assert (await rooms.state(code))["french"] == ["▁le"]  # step 2 asks what the model looks at to write the second piece


async def test_each_phone_counts_once_per_step_and_a_new_vote_replaces_the_old(rooms, room):
    code, _ = room
    await rooms.vote(code, ALICE, 1, 0)
    await rooms.vote(code, BOB, 1, 0)
    assert (await rooms.tally(code))["counts"] == [2, 0, 0, 0]
    await rooms.vote(code, ALICE, 1, 2)
    await rooms.vote(code, ALICE, 1.0, 2.0)  # a client may send whole numbers as floats
    assert (await rooms.tally(code))["counts"] == [1, 0, 1, 0]


async def test_votes_arriving_together_are_each_counted_once(rooms, room):
    code, _ = room
    voters = [f"phone-{i:04d}" for i in range(60)]
    await asyncio.gather(*(rooms.vote(code, voter, 1, i % 4) for i, voter in enumerate(voters)))
    assert (await rooms.tally(code))["counts"] == [15, 15, 15, 15]


async def test_reveal_shows_alpha_and_how_the_class_did(rooms, room):
    code, key = room
    for voter, piece in ((ALICE, 0), (BOB, 0), (CAROL, 2)):
        await rooms.vote(code, voter, 1, piece)
    assert (await rooms.tally(code))["alpha"] is None
    view = await rooms.reveal(code, key)
    assert view["alpha"] == ALPHA[0] and (await rooms.state(code))["alpha"] == ALPHA[0]  # the phones too
    assert (await rooms.state(code))["counts"] == [2, 0, 1, 0]  # now that it cannot sway them
    result = view["result"]
    assert result["argmax"] == 0 and result["picked_argmax"] == 2 and result["agreed"] is True
    assert result["alpha_on_picks"] == pytest.approx((2 * 0.7 + 1 * 0.1) / 3, abs=1e-4)
    assert result["written"] == "▁le"


async def test_next_moves_on_and_the_last_next_sums_up_where_the_class_agreed(rooms, room):
    code, key = room
    await rooms.vote(code, ALICE, 1, 0)  # agrees (the)
    await rooms.next(code, key)
    await rooms.vote(code, ALICE, 2, 1)  # disagrees (red, the model looks at cat)
    await rooms.vote(code, BOB, 2, 1)
    await rooms.next(code, key)
    await rooms.next(code, key)  # step 3: nobody voted
    await rooms.vote(code, CAROL, 4, 3)
    view = await rooms.next(code, key)
    assert view["finished"] and view["step"] == 4
    assert [s["agreed"] for s in view["summary"]] == [True, False, None, True]
    assert view["summary"][1]["class_picks"] == [1] and view["summary"][1]["argmax"] == 2
    with pytest.raises(classroom.ClassroomError, match="over"):
        await rooms.next(code, key)
    with pytest.raises(BadVote, match="over"):
        await rooms.vote(code, ALICE, 4, 0)


async def test_a_tie_agrees_when_the_models_piece_is_among_the_most_voted(rooms, room):
    code, key = room
    await rooms.vote(code, ALICE, 1, 0)
    await rooms.vote(code, BOB, 1, 1)
    assert (await rooms.reveal(code, key))["result"]["agreed"] is True


@pytest.mark.parametrize("call, error, message", [
    (lambda r, code, key: r.state("ZZZZZZ"), NoSuchRoom, "no open room 'ZZZZZZ'"),
    (lambda r, code, key: r.vote("ZZZZZZ", ALICE, 1, 0), NoSuchRoom, "check the code"),
    (lambda r, code, key: r.vote(code, ALICE, 1, 4), BadVote, "no English piece 4"),
    (lambda r, code, key: r.vote(code, ALICE, 1, -1), BadVote, "no English piece -1"),
    (lambda r, code, key: r.vote(code, ALICE, 1, 1.5), BadVote, "whole number"),
    (lambda r, code, key: r.vote(code, ALICE, 1, "cat"), BadVote, "whole number"),
    (lambda r, code, key: r.vote(code, ALICE, 2, 0), BadVote, "at step 1, not 2"),
    (lambda r, code, key: r.vote(code, "x" * 65, 1, 0), BadVote, "voter id"),
    (lambda r, code, key: r.vote(code, "short", 1, 0), BadVote, "voter id"),
    (lambda r, code, key: r.vote(code, "<script>alert(1)</script>", 1, 0), BadVote, "voter id"),
    (lambda r, code, key: r.vote(code, None, 1, 0), BadVote, "voter id"),
    (lambda r, code, key: r.reveal(code, "a student's guess"), WrongKey, "Only the teacher"),
    (lambda r, code, key: r.reveal(code, None), WrongKey, "Only the teacher"),
    (lambda r, code, key: r.next(code, ""), WrongKey, "Only the teacher"),
    (lambda r, code, key: r.next("ZZZZZZ", key), NoSuchRoom, "no open room"),
])
async def test_every_bad_request_is_refused_with_its_message_and_changes_nothing(rooms, room, call, error, message):
    code, key = room
    await rooms.vote(code, BOB, 1, 2)
    before = await snapshot(rooms, code)
    with pytest.raises(error, match=message):
        await call(rooms, code, key)
    assert await snapshot(rooms, code) == before


async def test_a_vote_for_a_revealed_step_is_refused(rooms, room):
    code, key = room
    await rooms.reveal(code, key)
    with pytest.raises(BadVote, match="already revealed"):
        await rooms.vote(code, ALICE, 1, 0)
    assert (await rooms.tally(code))["counts"] == [0, 0, 0, 0]


async def test_a_flood_of_votes_from_one_phone_is_refused_then_allowed_again(rooms, room, clock):
    code, _ = room
    for piece in range(classroom.VOTE_BURST):
        await rooms.vote(code, ALICE, 1, piece % 4)
    before = await snapshot(rooms, code)
    with pytest.raises(TooMany, match="Too many votes from this phone"):
        await rooms.vote(code, ALICE, 1, 3)
    assert await snapshot(rooms, code) == before
    await rooms.vote(code, BOB, 1, 3)  # another phone is not held back
    clock.now += classroom.VOTE_EVERY_S
    await rooms.vote(code, ALICE, 1, 3)
    assert (await rooms.tally(code))["counts"] == [0, 0, 0, 2]


async def test_wrong_codes_are_refused_beyond_a_rate_but_a_right_code_still_answers(rooms, room, clock):
    code, _ = room
    for _ in range(classroom.WRONG_CODES_PER_S):
        with pytest.raises(NoSuchRoom):
            await rooms.state("ABCDEF")
    with pytest.raises(TooMany, match="wrong room codes"):
        await rooms.state("ABCDEF")
    assert (await rooms.state(code))["step"] == 1
    clock.now += 1
    with pytest.raises(NoSuchRoom):
        await rooms.state("ABCDEF")


async def test_a_room_closes_after_its_idle_time_and_a_vote_keeps_it_open(rooms, room, clock):
    code, _ = room
    clock.now += classroom.IDLE_S - 1
    await rooms.vote(code, ALICE, 1, 0)
    clock.now += classroom.IDLE_S - 1
    assert (await rooms.state(code))["counts"] is None  # still open: polls alone would not have kept it
    clock.now += 2
    with pytest.raises(NoSuchRoom):
        await rooms.state(code)
    assert await rooms.count() == 0


async def test_the_number_of_rooms_and_of_phones_in_a_room_is_bounded(store, clock):
    rooms = Rooms(store, clock=clock, max_rooms=2, max_voters=2)
    code, _ = await rooms.open(ENGLISH, FRENCH, ALPHA)
    await rooms.open(ENGLISH, FRENCH, ALPHA)
    with pytest.raises(TooMany, match="2 rooms are open"):
        await rooms.open(ENGLISH, FRENCH, ALPHA)
    await rooms.vote(code, ALICE, 1, 0)
    await rooms.vote(code, BOB, 1, 0)
    with pytest.raises(TooMany, match="already has 2 phones"):
        await rooms.vote(code, CAROL, 1, 0)
    await rooms.vote(code, ALICE, 1, 1)  # a phone already in changes its vote
    assert (await rooms.tally(code))["counts"] == [1, 1, 0, 0] and await rooms.count() == 2
    clock.now += classroom.IDLE_S + 1
    await rooms.open(ENGLISH, FRENCH, ALPHA)  # the idle ones closed
    assert await rooms.count() == 1


async def test_a_translation_without_attention_cannot_host_a_room(rooms):
    with pytest.raises(NoAttention, match="no-attention-en-fr has no attention"):
        await rooms.open(ENGLISH, FRENCH, None, "no-attention-en-fr")
    assert await rooms.count() == 0


async def test_each_change_moves_the_version_a_page_redraws_on(rooms, room):
    code, key = room
    versions = [(await rooms.tally(code))["version"]]
    for change in (lambda: rooms.vote(code, ALICE, 1, 0), lambda: rooms.reveal(code, key), lambda: rooms.next(code, key)):
        await change()
        versions.append((await rooms.tally(code))["version"])
    assert versions == sorted(set(versions))


async def test_ten_thousand_votes_from_one_phone_count_as_its_burst_and_a_huge_code_is_refused_briefly(rooms, room):
    code, _ = room
    refused = 0
    for k in range(10_000):
        try:
            await rooms.vote(code, ALICE, 1, k % 4)
        except TooMany:
            refused += 1
    assert refused == 10_000 - classroom.VOTE_BURST and sum((await rooms.tally(code))["counts"]) == 1
    with pytest.raises(NoSuchRoom) as raised:
        await rooms.vote("Z" * 10_000, ALICE, 1, 0)
    assert len(str(raised.value)) < 200


async def test_two_processes_voting_into_one_room_count_every_vote_once(store, room, clock, request):
    """Two stores on one Redis are two app processes: their changes clash, and each is retried, never lost."""
    code, key = room
    other = store if isinstance(store, MemoryStore) else RedisStore(request.getfixturevalue("redis_url"))
    sides = [Rooms(store, clock=clock), Rooms(other, clock=clock)]
    voters = [f"phone-{i:04d}" for i in range(200)]
    await asyncio.gather(*(sides[i % 2].vote(code, voter, 1, i % 4) for i, voter in enumerate(voters)))
    clock.now += READ_AGAIN_S  # what one process changed shows on the other within READ_AGAIN_S
    assert (await sides[0].tally(code))["counts"] == (await sides[1].tally(code))["counts"] == [50, 50, 50, 50]
    assert (await sides[1].reveal(code, key))["revealed"]
    clock.now += READ_AGAIN_S
    assert (await sides[0].state(code))["revealed"]


async def test_a_vote_just_after_another_process_moved_the_room_is_judged_on_the_room_as_it_is_now(redis_url, clock):
    """A process votes on the room as it read it READ_AGAIN_S ago at most; what another process changed since is
    not lost on it: a vote for the step gone by is refused, and one for the new step counted."""
    code, key = await Rooms(redis_store(redis_url), clock=clock).open(ENGLISH, FRENCH, ALPHA)
    here, there = Rooms(RedisStore(redis_url), clock=clock), Rooms(RedisStore(redis_url), clock=clock)
    assert (await here.state(code))["step"] == 1  # remembered here
    await there.next(code, key)
    with pytest.raises(BadVote, match="at step 2, not 1"):
        await here.vote(code, ALICE, 1, 0)
    assert (await here.vote(code, BOB, 2, 1)).startswith("Your vote for step 2")
    clock.now += READ_AGAIN_S
    assert (await there.tally(code))["counts"] == [0, 1, 0, 0]


async def test_a_move_on_one_process_while_another_counts_a_vote_keeps_that_vote(redis_url, clock):
    """The teacher's move reads the room, a phone's vote on another process is written, then the move is: it is
    made again on the room with the vote, so the step's tally keeps it."""
    code, key = await Rooms(redis_store(redis_url), clock=clock).open(ENGLISH, FRENCH, ALPHA)
    mover, other = Rooms(RedisStore(redis_url), clock=clock), Rooms(RedisStore(redis_url), clock=clock)
    read, held, answered = mover.store._live, asyncio.Event(), []

    async def slow(code, now):  # the move's first read held back until the vote is in
        seen = await read(code, now)
        if not answered:
            answered.append(seen)
            await held.wait()
        return seen

    mover.store._live = slow
    moving = asyncio.create_task(mover.next(code, key))
    while not answered:
        await asyncio.sleep(0.001)
    await other.vote(code, ALICE, 1, 2)
    held.set()
    assert (await moving)["step"] == 2
    assert classroom.Room.from_stored(await snapshot(mover, code)).tallies == {"1": [0, 0, 1, 0]}


async def test_a_room_in_redis_outlives_the_process_that_opened_it(redis_url, clock):
    code, key = await Rooms(redis_store(redis_url), clock=clock).open(ENGLISH, FRENCH, ALPHA)
    first = Rooms(RedisStore(redis_url), clock=clock)
    await first.vote(code, ALICE, 1, 2)
    await first.reveal(code, key)
    restarted = Rooms(RedisStore(redis_url), clock=clock)  # a new process: nothing in memory
    assert (await restarted.tally(code))["counts"] == [0, 0, 1, 0] and (await restarted.state(code))["alpha"] == ALPHA[0]
    assert (await restarted.next(code, key))["step"] == 2


async def test_a_dead_redis_is_a_message_and_no_crash(clock):
    rooms = Rooms(RedisStore(f"redis://127.0.0.1:{free_port()}/0"), clock=clock)  # nothing listens there
    for call in (lambda: rooms.open(ENGLISH, FRENCH, ALPHA), lambda: rooms.state("ABCDEF"),
                 lambda: rooms.vote("ABCDEF", ALICE, 1, 0), lambda: rooms.reveal("ABCDEF", "key")):
        with pytest.raises(RoomsDown, match="cannot be reached just now"):
            await call()
