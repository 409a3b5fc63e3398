"""Where the rooms of attn_demo.classroom.rooms are kept: this process's memory, or a Redis server that several app processes share.

Both stores keep opaque values (a room, serialised) under a room's code, and a few token buckets for app-wide
limits. Every call is a coroutine on the server's own event loop: a call to Redis awaits its answer there
(redis.asyncio), holding no thread, so a slow or dead Redis holds up that call alone. Every change is atomic: a
change function reads the current value and returns the new one, and no other change to that room comes in
between (in memory, nothing else runs between two awaits; in Redis, a script writes the new value only where the
one read is still there, else the change runs again on what another process left). A room expires ttl_s after
its last change, by the caller's clock (`now`); Redis also drops it by itself then (a key TTL), so an abandoned
room costs nothing. ATTN_DEMO_ROOMS picks the store: `memory` (the default) or a `redis://host:port/db` URL.
"""
import asyncio

import orjson

ROOMS_ENV = "ATTN_DEMO_ROOMS"
OPENED, TAKEN, FULL = "opened", "taken", "full"  # what open() found
REDIS_PREFIX = "attn-demo:"  # every key the app writes in Redis starts so, leaving the rest of the database alone
REDIS_TIMEOUT_S = 2.0  # a Redis that stops answering fails a request within this
# a room this process read or changed this recently is read again from its memory, not Redis: 300 phones opening the
# room's page at once cost one round trip a process, not 300; a phone polls every 2 s (ui.classroom.PHONE_POLL_S), so
# what another process changed shows within this on top; every change is still made on the value in Redis
READ_AGAIN_S = 0.25
DOWN = ("The rooms' store (Redis) cannot be reached just now: try again in a moment. "
        "Your room and its votes are kept there.")


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
    """Rooms in this process's memory, for the one event loop that calls them: nothing to install, gone when the
    process ends. No call awaits anything, so each runs whole, and no other change comes in between."""

    def __init__(self):
        self.rooms: dict[str, tuple[bytes, float]] = {}  # code → (value, expires at)
        self.buckets: dict[str, list] = {}

    async def open(self, code: str, value: bytes, now: float, ttl_s: float, most: int) -> str:
        """Keep `value` under a new `code`: OPENED, or TAKEN where that code is open, or FULL where `most` rooms are."""
        self._expire(now)
        if code in self.rooms:
            return TAKEN
        if len(self.rooms) >= most:
            return FULL
        self.rooms[code] = (value, now + ttl_s)
        return OPENED

    async def read(self, code: str, now: float) -> bytes | None:
        self._expire(now)
        return self.rooms[code][0] if code in self.rooms else None

    async def change(self, code: str, change, now: float, ttl_s: float):
        """change(the open room's value) → (its new value, or None to keep it; a reply): the reply, or None where
        no room `code` is open (change is not called). What change raises propagates, and nothing is written."""
        self._expire(now)
        if code not in self.rooms:
            return None
        value, reply = change(self.rooms[code][0])
        if value is not None:
            self.rooms[code] = (value, now + ttl_s)
        return reply

    async def take(self, name: str, burst: float, every_s: float, now: float) -> bool:
        """One action from the app-wide bucket `name` (take_token)."""
        self.buckets[name], allowed = take_token(self.buckets.get(name), burst, every_s, now)
        return allowed

    async def count(self, now: float) -> int:
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

# A change writes in one round trip, and only over the value it read ('' for none): where another process wrote
# first, nothing is written (0) and the change is read and made again. A room's new time goes into the index too.
SWAP_SCRIPT = """
if (redis.call('GET', KEYS[1]) or '') ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
if KEYS[2] then redis.call('ZADD', KEYS[2], ARGV[4], ARGV[5]) end
return 1
"""


class RedisStore:
    """Rooms in a Redis server, shared by every app process given its URL, and kept through their restarts.

    A room is a string key with a TTL; an index (a sorted set: code → expiry time) counts the open rooms. A read is
    one round trip, or none where this process read or changed the room in the last READ_AGAIN_S; a change two (read,
    then SWAP_SCRIPT)."""

    def __init__(self, url: str, prefix: str = REDIS_PREFIX):
        import redis.asyncio  # only a Redis-backed app needs the package loaded

        self.errors = redis.asyncio.RedisError
        self.redis = redis.asyncio.Redis.from_url(url, socket_timeout=REDIS_TIMEOUT_S,
                                                  socket_connect_timeout=REDIS_TIMEOUT_S)
        self.url, self.prefix, self.index = url, prefix, f"{prefix}rooms"
        self.open_script = self.redis.register_script(OPEN_SCRIPT)
        self.swap_script = self.redis.register_script(SWAP_SCRIPT)
        # a swap fails where another client wrote first; within this process the lock takes turns instead, so a
        # full room's votes do not each retry against the others' (only another process's can clash)
        self.lock = asyncio.Lock()
        # calls that found Redis unreachable so far: a change waiting its turn behind one of them is refused at
        # once, so that behind a Redis that stopped answering a class's votes are each told within one timeout,
        # not one timeout after another (a slow Redis that answers fails nothing: its line only waits)
        self.failures = 0
        self.recent: dict[str, tuple[bytes, float, float]] = {}  # code → (value, read or written at, expires at)
        self.writes = 0  # room changes this process made: a read that one overtook is not kept as recent

    async def open(self, code: str, value: bytes, now: float, ttl_s: float, most: int) -> str:
        found = await self._call(self.open_script, keys=[self.index, self._room(code)],
                                 args=[code, value, now, now + ttl_s, _ms(ttl_s), most, self._room("")])
        return found.decode()

    async def read(self, code: str, now: float) -> bytes | None:
        seen = self.recent.get(code)  # (value, at, expires)
        if seen is not None and _read_again(seen, now) and seen[2] >= now:
            return seen[0]
        writes = self.writes
        value, expires = await self._call(self._live, code, now)
        # kept where no change of ours came in between: then it is not older than one this process wrote
        if value is not None and writes == self.writes:
            self._remember(code, value, now, expires)
        return value

    async def change(self, code: str, change, now: float, ttl_s: float):
        """As MemoryStore.change, across processes."""
        async def read():
            return (await self._live(code, now))[0]

        def change_open(value):  # a room not open is not changed: None, as in memory
            return (None, None) if value is None else change(value)

        written, reply = await self._swapped([self._room(code), self.index], read, change_open, _ms(ttl_s), now + ttl_s,
                                             code)
        if written is not None:
            self.writes += 1
            self._remember(code, written, now, now + ttl_s)
        return reply

    async def take(self, name: str, burst: float, every_s: float, now: float) -> bool:
        key = f"{self.prefix}limit:{name}"

        def take(value):
            bucket, allowed = take_token(orjson.loads(value) if value else None, burst, every_s, now)
            return orjson.dumps(bucket), allowed

        # a bucket that has had time to fill up again is the same as none: let Redis drop it then
        return (await self._swapped([key], lambda: self.redis.get(key), take, _ms(burst * every_s + 1)))[1]

    async def _swapped(self, keys: list[str], read, change, ttl_ms: int, *index_entry):
        """change(await read()) → (new value or None to keep it, reply), the new value written by SWAP_SCRIPT under
        keys[0] over the value read (and index_entry, its time and code, into keys[1]); made again on what another
        client left until no write came in between. The value written (None where nothing was) and the reply."""
        async def attempt():
            while True:
                value = await read()
                new, reply = change(value)
                if new is None or await self.swap_script(keys=keys, args=[value or b"", new, ttl_ms, *index_entry]):
                    return new, reply

        failures = self.failures
        async with self.lock:
            if self.failures != failures:
                raise StoreDown(DOWN)
            return await self._call(attempt)

    async def count(self, now: float) -> int:
        return await self._call(self.redis.zcount, self.index, now, "+inf")

    async def _live(self, code: str, now: float) -> tuple[bytes | None, float]:
        """The room's value and its expiry time in the index where it is open at `now`, else (None, 0): its time and
        its value in one round trip."""
        expires, value = await self.redis.pipeline(transaction=False).zscore(self.index, code).get(self._room(code)).execute()
        return (value, expires) if value is not None and expires is not None and expires >= now else (None, 0.0)

    def _remember(self, code: str, value: bytes, now: float, expires: float):
        """Keep the room's value as read or written at `now`, dropping those kept too long ago to be read again."""
        self.recent = {kept: entry for kept, entry in self.recent.items() if _read_again(entry, now)}
        self.recent[code] = (value, now, expires)

    async def _call(self, call, *args, **kwargs):
        try:
            return await call(*args, **kwargs)
        except self.errors as error:
            self.failures += 1
            raise StoreDown(DOWN) from error

    def _room(self, code: str) -> str:
        return f"{self.prefix}room:{code}"


def _read_again(entry: tuple, now: float) -> bool:
    """Whether a room kept as read or written at entry[1] may be read again from memory at `now`."""
    return 0 <= now - entry[1] < READ_AGAIN_S


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
