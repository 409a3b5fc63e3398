"""Where rooms are kept: the store ATTN_DEMO_ROOMS names, Redis's own expiry of an idle room, and the token bucket."""
import time

import pytest

from attn_demo.classroom.rooms import Rooms
from attn_demo.classroom.stores import MemoryStore, RedisStore, store_named, take_token

ENGLISH, FRENCH, ALPHA = ["▁hi", "</s>"], ["▁salut", "</s>"], [[0.9, 0.1], [0.2, 0.8]]


def test_attn_demo_rooms_names_memory_or_a_redis_url_and_nothing_else(redis_url):
    assert isinstance(store_named("memory"), MemoryStore) and isinstance(store_named(""), MemoryStore)
    assert store_named(f" {redis_url} ").url == redis_url
    with pytest.raises(ValueError, match="ATTN_DEMO_ROOMS is 'mongodb://x': it must be 'memory' or a redis://"):
        store_named("mongodb://x")


def test_redis_drops_an_idle_room_by_itself_and_a_change_keeps_it(redis_url):
    store = RedisStore(redis_url)
    store.redis.flushdb()
    rooms = Rooms(store, idle_s=0.6)  # the real clock: Redis's TTL and the rule's time agree
    code, _ = rooms.open(ENGLISH, FRENCH, ALPHA)
    key = store._room(code)
    assert 0 < store.redis.pttl(key) <= 600
    time.sleep(0.4)
    rooms.vote(code, "alice-phone-1", 1, 0)
    assert store.redis.pttl(key) > 400  # the vote gave it its whole idle time again
    time.sleep(0.4)
    rooms.state(code)  # a poll does not: only votes and moves keep a room open
    time.sleep(0.3)
    assert not store.redis.exists(key) and len(rooms) == 0


@pytest.mark.parametrize("bucket, now, after, allowed", [
    (None, 10.0, [4.0, 10.0], True),  # a new bucket starts full
    ([0.5, 10.0], 10.0, [0.5, 10.0], False),
    ([0.5, 10.0], 11.0, [0.0, 11.0], True),  # half a token more after one second at one per 2 s
    ([0.0, 10.0], 100.0, [4.0, 100.0], True),  # it fills up to the burst, no further
    ([1.0, 10.0], 9.0, [0.0, 9.0], True),  # a clock that goes back adds nothing
])
def test_a_token_bucket_allows_a_burst_then_one_action_every_interval(bucket, now, after, allowed):
    assert take_token(bucket, 5, 2.0, now) == (after, allowed)
