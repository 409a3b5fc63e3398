"""Where rooms are kept: the store ATTN_DEMO_ROOMS names, Redis's own expiry of an idle room, and the token bucket."""
import asyncio
import time

import pytest
import redis

from attn_demo.classroom import stores
from attn_demo.classroom.rooms import Rooms, RoomsDown
from attn_demo.classroom.stores import READ_AGAIN_S, MemoryStore, RedisStore, store_named, take_token

ENGLISH, FRENCH, ALPHA = ["▁hi", "</s>"], ["▁salut", "</s>"], [[0.9, 0.1], [0.2, 0.8]]


def test_attn_demo_rooms_names_memory_or_a_redis_url_and_nothing_else(redis_url):
    assert isinstance(store_named("memory"), MemoryStore) and isinstance(store_named(""), MemoryStore)
    assert store_named(f" {redis_url} ").url == redis_url
    with pytest.raises(ValueError, match="ATTN_DEMO_ROOMS is 'mongodb://x': it must be 'memory' or a redis://"):
        store_named("mongodb://x")


@pytest.mark.anyio
async def test_redis_drops_an_idle_room_by_itself_and_a_change_keeps_it(redis_url):
    redis.Redis.from_url(redis_url).flushdb()
    store = RedisStore(redis_url)
    rooms = Rooms(store, idle_s=0.6)  # the real clock: Redis's TTL and the rule's time agree
    code, _ = await rooms.open(ENGLISH, FRENCH, ALPHA)
    key = store._room(code)
    assert 0 < await store.redis.pttl(key) <= 600
    await asyncio.sleep(0.4)
    await rooms.vote(code, "alice-phone-1", 1, 0)
    assert await store.redis.pttl(key) > 400  # the vote gave it its whole idle time again
    await asyncio.sleep(0.4)
    await rooms.state(code)  # a poll does not: only votes and moves keep a room open
    await asyncio.sleep(0.3)
    assert not await store.redis.exists(key) and await rooms.count() == 0


def counted(store: RedisStore) -> list:
    """The round trips of the store's room reads from now on, one entry each."""
    trips, read = [], store._live

    async def live(code, now):
        trips.append(code)
        return await read(code, now)

    store._live = live
    return trips


@pytest.mark.anyio
async def test_a_room_read_or_changed_just_now_is_read_from_memory_and_the_other_process_sees_a_change_after_read_again_s(
        redis_url):
    redis.Redis.from_url(redis_url).flushdb()
    first, second = RedisStore(redis_url), RedisStore(redis_url)  # two app processes on one Redis
    now = 1000.0
    assert await first.open("ABCDEF", b"v1", now, 60, 10) == stores.OPENED
    assert (await second.read("ABCDEF", now)).header == b"v1"
    trips = counted(second)
    assert [(await second.read("ABCDEF", now + t)).header for t in (0.0, 0.1, READ_AGAIN_S / 2)] == [b"v1"] * 3
    assert trips == []
    assert await first.change("ABCDEF", lambda stored: (b"v2", "changed"), now + 0.1, 60) == "changed"
    assert (await first.read("ABCDEF", now + 0.1)).header == b"v2"  # its own change at once
    assert (await second.read("ABCDEF", now + 0.1)).header == b"v1" and trips == []  # the other's within READ_AGAIN_S
    assert (await second.read("ABCDEF", now + READ_AGAIN_S)).header == b"v2" and trips == ["ABCDEF"]  # ... and then
    assert (await second.read("ABCDEF", now + READ_AGAIN_S)).header == b"v2" and trips == ["ABCDEF"]
    assert await second.read("ZZZZZZ", now) is None and await second.read("ZZZZZZ", now) is None  # no room: asked each time
    assert trips == ["ABCDEF", "ZZZZZZ", "ZZZZZZ"]


@pytest.mark.anyio
async def test_a_remembered_room_past_its_time_is_gone_at_once(redis_url):
    redis.Redis.from_url(redis_url).flushdb()
    store, now = RedisStore(redis_url), 1000.0
    await store.open("ABCDEF", b"v1", now, 60, 10)
    await store.change("ABCDEF", lambda stored: (b"v2", None), now, 0.1)  # open 0.1 s more
    assert (await store.read("ABCDEF", now + 0.05)).header == b"v2" and await store.read("ABCDEF", now + 0.15) is None


@pytest.mark.anyio
@pytest.mark.parametrize("kind", ["memory", "redis"])
async def test_a_code_opened_again_after_its_room_closed_holds_nothing_of_the_old_room(kind, request):
    if kind == "redis":
        redis.Redis.from_url(request.getfixturevalue("redis_url")).flushdb()
    store = MemoryStore() if kind == "memory" else RedisStore(request.getfixturevalue("redis_url"))
    now = 1000.0
    await store.open("ABCDEF", b"old", now, 60, 10)
    assert await store.put("ABCDEF", "phone-0001", lambda header, entry: (b"vote", "put"), now, 60, 10) == "put"
    assert await store.open("ABCDEF", b"new", now + 61, 60, 10) == stores.OPENED
    assert await store.read("ABCDEF", now + 61) == stores.Stored(b"new", {}, 0)


@pytest.mark.anyio
async def test_a_read_that_a_change_of_this_process_overtook_is_not_remembered(redis_url):
    """A read answered before this process's change but returned after it: the change is what is read again."""
    redis.Redis.from_url(redis_url).flushdb()
    store, now = RedisStore(redis_url), 1000.0
    await store.open("ABCDEF", b"v1", now, 60, 10)
    read, held, answered = store._live, asyncio.Event(), []

    async def slow(code, now):  # the first read's answer held back until the change is made
        value = await read(code, now)
        if not answered:
            answered.append(value)
            await held.wait()
        return value

    store._live = slow
    reading = asyncio.create_task(store.read("ABCDEF", now))
    while not answered:
        await asyncio.sleep(0.001)
    await store.change("ABCDEF", lambda stored: (stored.header + b"+", None), now, 60)
    held.set()
    assert (await reading).header == b"v1"
    assert (await store.read("ABCDEF", now)).header == b"v1+"


@pytest.mark.anyio
async def test_a_redis_that_stops_answering_holds_up_its_own_call_alone(monkeypatch):
    """A Redis that takes the connection and never answers: the room call fails within the store's timeout, and the
    server's loop answers everything else meanwhile."""
    monkeypatch.setattr(stores, "REDIS_TIMEOUT_S", 0.5)
    held = []  # the connections, kept open
    silent = await asyncio.start_server(lambda reader, writer: held.append(writer), "127.0.0.1", 0)  # never replies
    rooms = Rooms(RedisStore(f"redis://127.0.0.1:{silent.sockets[0].getsockname()[1]}/0"))
    started = time.perf_counter()
    call = asyncio.create_task(rooms.state("ABCDEF"))
    ticks = 0
    while not call.done():
        await asyncio.sleep(0.01)
        ticks += 1
    with pytest.raises(RoomsDown, match="cannot be reached just now"):
        call.result()
    assert 0.5 <= time.perf_counter() - started < 2 and ticks >= 30  # the loop turned all the while
    silent.close()


@pytest.mark.anyio
async def test_votes_in_line_behind_a_redis_that_stopped_answering_are_refused_when_the_first_times_out(monkeypatch):
    """A class votes at once into a Redis that takes connections and never answers: the first vote waits out the
    timeout, and the votes in line behind it are refused then, without each waiting out a timeout of its own."""
    monkeypatch.setattr(stores, "REDIS_TIMEOUT_S", 0.3)
    held = []
    silent = await asyncio.start_server(lambda reader, writer: held.append(writer), "127.0.0.1", 0)
    rooms = Rooms(RedisStore(f"redis://127.0.0.1:{silent.sockets[0].getsockname()[1]}/0"))
    votes = await asyncio.gather(*(rooms.vote("ABCDEF", f"phone-{i:05d}", 1, 0) for i in range(5)), return_exceptions=True)
    assert [type(vote) for vote in votes] == [RoomsDown] * 5
    assert len(held) == 1  # one call went to Redis; the four behind it did not try again
    silent.close()


@pytest.mark.parametrize("bucket, now, after, allowed", [
    (None, 10.0, [4.0, 10.0], True),  # a new bucket starts full
    ([0.5, 10.0], 10.0, [0.5, 10.0], False),
    ([0.5, 10.0], 11.0, [0.0, 11.0], True),  # half a token more after one second at one per 2 s
    ([0.0, 10.0], 100.0, [4.0, 100.0], True),  # it fills up to the burst, no further
    ([1.0, 10.0], 9.0, [0.0, 9.0], True),  # a clock that goes back adds nothing
])
def test_a_token_bucket_allows_a_burst_then_one_action_every_interval(bucket, now, after, allowed):
    assert take_token(bucket, 5, 2.0, now) == (after, allowed)
