"""Where the rooms of attn_demo.classroom.rooms are kept: this process's memory, or a Redis server that several app processes share.

Both stores keep opaque values (a room, serialised) under a room's code, and a few token buckets for app-wide
limits. Every change is atomic: a change function reads the current value and returns the new one, and no
other change to that room comes in between (a lock in memory; WATCH/MULTI across processes in Redis). A room
expires ttl_s after its last change, by the caller's clock (`now`); Redis also drops it by itself then (a key
TTL), so an abandoned room costs nothing. ATTN_DEMO_ROOMS picks the store: `memory` (the default) or a
`redis://host:port/db` URL.
"""
import threading

import orjson

ROOMS_ENV = "ATTN_DEMO_ROOMS"
OPENED, TAKEN, FULL = "opened", "taken", "full"  # what open() found
REDIS_PREFIX = "attn-demo:"  # every key the app writes in Redis starts so, leaving the rest of the database alone
REDIS_TIMEOUT_S = 2.0  # a Redis that stops answering fails a request within this, instead of holding its thread


class StoreDown(RuntimeError):
    """The store cannot be reached; the message is fit for a student's screen."""


def take_token(bucket: list | None, burst: float, every_s: float, now: float) -> tuple[list, bool]:
    """A token bucket [tokens, at] (None: a full one): `burst` actions at once, then one every `every_s` seconds.
    The bucket after one more action is asked for, and whether it was allowed."""
    tokens, at = bucket or (burst, now)
    tokens = min(burst, tokens + max(0.0, now - at) / every_s)
    if tokens < 1:
        return [tokens, now], False
    return [tokens - 1, now], True


class MemoryStore:
    """Rooms in this process's memory, behind one lock: nothing to install, gone when the process ends."""

    waits_on_network = False  # a call is a few dictionary reads under a lock held for microseconds

    def __init__(self):
        self.rooms: dict[str, tuple[bytes, float]] = {}  # code → (value, expires at)
        self.buckets: dict[str, list] = {}
        self.lock = threading.Lock()

    def open(self, code: str, value: bytes, now: float, ttl_s: float, most: int) -> str:
        """Keep `value` under a new `code`: OPENED, or TAKEN where that code is open, or FULL where `most` rooms are."""
        with self.lock:
            self._expire(now)
            if code in self.rooms:
                return TAKEN
            if len(self.rooms) >= most:
                return FULL
            self.rooms[code] = (value, now + ttl_s)
            return OPENED

    def read(self, code: str, now: float) -> bytes | None:
        with self.lock:
            self._expire(now)
            return self.rooms[code][0] if code in self.rooms else None

    def change(self, code: str, change, now: float, ttl_s: float):
        """change(value or None) → (new value or None to keep the old, reply); the reply. What change raises
        propagates, and nothing is written."""
        with self.lock:
            self._expire(now)
            value, reply = change(self.rooms[code][0] if code in self.rooms else None)
            if value is not None:
                self.rooms[code] = (value, now + ttl_s)
            return reply

    def take(self, name: str, burst: float, every_s: float, now: float) -> bool:
        """One action from the app-wide bucket `name` (take_token)."""
        with self.lock:
            self.buckets[name], allowed = take_token(self.buckets.get(name), burst, every_s, now)
            return allowed

    def count(self, now: float) -> int:
        with self.lock:
            self._expire(now)
            return len(self.rooms)

    def _expire(self, now: float):
        for code in [code for code, (_, expires) in self.rooms.items() if expires < now]:
            del self.rooms[code]


# Opening is one script, so that two processes cannot both open the 100th room: drop the rooms past their
# time, refuse where the code is open or `most` are, else keep the room with its TTL and its time in the index.
OPEN_SCRIPT = """
local index, room, code = KEYS[1], KEYS[2], ARGV[1]
for _, gone in ipairs(redis.call('ZRANGEBYSCORE', index, '-inf', '(' .. ARGV[3])) do
  redis.call('DEL', ARGV[7] .. gone)
end
redis.call('ZREMRANGEBYSCORE', index, '-inf', '(' .. ARGV[3])
if redis.call('ZSCORE', index, code) then return 'taken' end
if redis.call('ZCARD', index) >= tonumber(ARGV[6]) then return 'full' end
redis.call('SET', room, ARGV[2], 'PX', ARGV[5])
redis.call('ZADD', index, ARGV[4], code)
return 'opened'
"""


class RedisStore:
    """Rooms in a Redis server, shared by every app process given its URL, and kept through their restarts.

    A room is a string key with a TTL; an index (a sorted set: code → expiry time) counts the open rooms."""

    waits_on_network = True  # a call waits for the server's answer: up to REDIS_TIMEOUT_S

    def __init__(self, url: str, prefix: str = REDIS_PREFIX):
        import redis  # only a Redis-backed app needs the package loaded

        self.errors, self.watch_error = redis.RedisError, redis.WatchError
        self.redis = redis.Redis.from_url(url, socket_timeout=REDIS_TIMEOUT_S, socket_connect_timeout=REDIS_TIMEOUT_S)
        self.url, self.prefix, self.index = url, prefix, f"{prefix}rooms"
        self.open_script = self.redis.register_script(OPEN_SCRIPT)
        # WATCH retries a change another client made first; within this process the lock takes turns instead,
        # so a full room's votes do not each retry against the others' (only another process's can clash)
        self.lock = threading.Lock()

    def open(self, code: str, value: bytes, now: float, ttl_s: float, most: int) -> str:
        found = self._call(self.open_script, keys=[self.index, self._room(code)],
                           args=[code, value, now, now + ttl_s, _ms(ttl_s), most, self._room("")])
        return found.decode()

    def read(self, code: str, now: float) -> bytes | None:
        pipe = self.redis.pipeline(transaction=False)
        expires, value = self._call(pipe.zscore(self.index, code).get(self._room(code)).execute)
        return value if expires is not None and expires >= now else None

    def change(self, code: str, change, now: float, ttl_s: float):
        """As MemoryStore.change, across processes: WATCH the room, read it, write it in MULTI; where another
        process changed it in between, EXEC fails and the change runs again on what that one left."""
        key = self._room(code)

        def write(pipe, value):
            pipe.set(key, value, px=_ms(ttl_s))
            pipe.zadd(self.index, {code: now + ttl_s})

        return self._transact(key, lambda pipe: self._live(pipe, code, key, now), change, write)

    def take(self, name: str, burst: float, every_s: float, now: float) -> bool:
        key = f"{self.prefix}limit:{name}"

        def take(bucket):
            bucket, allowed = take_token(orjson.loads(bucket) if bucket else None, burst, every_s, now)
            return orjson.dumps(bucket), allowed

        # a bucket that has had time to fill up again is the same as none: let Redis drop it then
        keep_ms = _ms(burst * every_s + 1)
        return self._transact(key, lambda pipe: pipe.get(key), take,
                              lambda pipe, value: pipe.set(key, value, px=keep_ms))

    def count(self, now: float) -> int:
        return self._call(self.redis.zcount, self.index, now, "+inf")

    def _live(self, pipe, code: str, key: str, now: float) -> bytes | None:
        expires = pipe.zscore(self.index, code)
        return pipe.get(key) if expires is not None and expires >= now else None

    def _transact(self, key: str, read, change, write):
        def attempt():
            with self.redis.pipeline() as pipe:
                while True:
                    try:
                        pipe.watch(key)
                        value, reply = change(read(pipe))
                        pipe.multi()
                        if value is not None:
                            write(pipe, value)
                        pipe.execute()
                        return reply
                    except self.watch_error:
                        continue

        with self.lock:
            return self._call(attempt)

    def _call(self, call, *args, **kwargs):
        try:
            return call(*args, **kwargs)
        except self.errors as error:
            raise StoreDown("The rooms' store (Redis) cannot be reached just now: try again in a moment. "
                            "Your room and its votes are kept there.") from error

    def _room(self, code: str) -> str:
        return f"{self.prefix}room:{code}"


def _ms(seconds: float) -> int:
    return max(1, round(seconds * 1000))


def store_named(spec: str):
    """The store ATTN_DEMO_ROOMS names: `memory`, or a `redis://` (or `rediss://`, `unix://`) URL."""
    spec = spec.strip()
    if spec in ("", "memory"):
        return MemoryStore()
    if spec.startswith(("redis://", "rediss://", "unix://")):
        return RedisStore(spec)
    raise ValueError(f"{ROOMS_ENV} is {spec[:80]!r}: it must be 'memory' or a redis://host:port/db URL")
