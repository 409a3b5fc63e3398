"""Where the rooms of attn_demo.classroom.rooms are kept: this process's memory, or a Redis server that several app processes share.

A room is kept as its header (an opaque value: the sentence, the step, what the teacher did) and its entries, one
small opaque value a key (a phone's vote and its vote bucket), so that a vote writes its own entry, a few dozen
bytes, not the whole room. Beside the rooms, a few token buckets keep app-wide limits. Every call is a coroutine on
the server's own event loop: a call to Redis awaits its answer there (redis.asyncio), holding no thread, so a slow
or dead Redis holds up that call alone. Every change is atomic: a change function reads what it needs and returns
what to write, and nothing it read changes in between (in memory, nothing else runs between two awaits; in Redis, a
script writes only where what was read is still there, else the change runs again on what another process left).
A header change waits for no entry and an entry for no other entry, so phones voting on two processes at once do
not clash. A room expires ttl_s after its last change, by the caller's clock (`now`); Redis also drops it by
itself then (key TTLs), so an abandoned room costs nothing. ATTN_DEMO_ROOMS picks the store: `memory` (the
default) or a `redis://host:port/db` URL.
"""
import asyncio
from dataclasses import dataclass, field
from typing import NamedTuple

import orjson

ROOMS_ENV = "ATTN_DEMO_ROOMS"
OPENED, TAKEN, FULL = "opened", "taken", "full"  # what open() found; FULL is also put()'s refusal of a new key
REDIS_PREFIX = "attn-demo:"  # every key the app writes in Redis starts so, leaving the rest of the database alone
REDIS_TIMEOUT_S = 2.0  # a Redis that stops answering fails a request within this
# a room this process read or changed this recently is read again from its memory, not Redis: 300 phones opening the
# room's page at once cost one round trip a process, not 300; a phone polls every 2 s (ui.classroom.PHONE_POLL_S), so
# what another process changed shows within this on top; every change is still made on what Redis holds
READ_AGAIN_S = 0.25
DOWN = ("The rooms' store (Redis) cannot be reached just now: try again in a moment. "
        "Your room and its votes are kept there.")


class StoreDown(RuntimeError):
    """The store cannot be reached; the message is fit for a student's screen."""


class Stored(NamedTuple):
    """A room as a store keeps it."""
    header: bytes
    entries: dict[str, bytes]  # key → its entry
    version: int  # one more with every change of the header or an entry


def take_token(bucket: list | None, burst: float, every_s: float, now: float) -> tuple[list, bool]:
    """A token bucket [tokens, at] (None: a full one): `burst` actions at once, then one every `every_s` seconds.
    The bucket after one more action is asked for, and whether it was allowed."""
    tokens, at = bucket or (burst, now)
    tokens = min(burst, tokens + max(0.0, now - at) / every_s)
    if tokens < 1:
        return [tokens, now], False
    return [tokens - 1, now], True


@dataclass
class _Kept:
    """A room in MemoryStore."""
    header: bytes
    expires: float
    entries: dict[str, bytes] = field(default_factory=dict)
    version: int = 0


class MemoryStore:
    """Rooms in this process's memory, for the one event loop that calls them: nothing to install, gone when the
    process ends. No call awaits anything, so each runs whole, and no other change comes in between."""

    def __init__(self):
        self.rooms: dict[str, _Kept] = {}
        self.buckets: dict[str, list] = {}

    async def open(self, code: str, header: bytes, now: float, ttl_s: float, most: int) -> str:
        """Keep a new room under `code`: OPENED, or TAKEN where that code is open, or FULL where `most` rooms are."""
        self._expire(now)
        if code in self.rooms:
            return TAKEN
        if len(self.rooms) >= most:
            return FULL
        self.rooms[code] = _Kept(header, now + ttl_s)
        return OPENED

    async def read(self, code: str, now: float) -> Stored | None:
        self._expire(now)
        kept = self.rooms.get(code)
        return None if kept is None else Stored(kept.header, dict(kept.entries), kept.version)

    async def change(self, code: str, change, now: float, ttl_s: float):
        """change(the open room, a Stored) → (its new header, or None to keep it; a reply): the reply, or None where
        no room `code` is open (change is not called). What change raises propagates, and nothing is written."""
        stored = await self.read(code, now)
        if stored is None:
            return None
        header, reply = change(stored)
        if header is not None:
            kept = self.rooms[code]
            kept.header, kept.version, kept.expires = header, kept.version + 1, now + ttl_s
        return reply

    async def put(self, code: str, key: str, change, now: float, ttl_s: float, most: int):
        """change(the room's header, the entry under `key` or None) → (the new entry, a reply): the reply; None where
        no room `code` is open, FULL where the entry would be new and `most` are kept (both: change is not written)."""
        self._expire(now)
        kept = self.rooms.get(code)
        if kept is None:
            return None
        entry, reply = change(kept.header, kept.entries.get(key))
        if key not in kept.entries and len(kept.entries) >= most:
            return FULL
        kept.entries[key], kept.version, kept.expires = entry, kept.version + 1, now + ttl_s
        return reply

    async def take(self, name: str, burst: float, every_s: float, now: float) -> bool:
        """One action from the app-wide bucket `name` (take_token)."""
        self.buckets[name], allowed = take_token(self.buckets.get(name), burst, every_s, now)
        return allowed

    async def count(self, now: float) -> int:
        self._expire(now)
        return len(self.rooms)

    def _expire(self, now: float):
        for code in [code for code, kept in self.rooms.items() if kept.expires < now]:
            del self.rooms[code]


# In Redis a room is a hash ROOM:header (its `value`; `gen`, one more with each header change; `puts`, with each
# entry written) and a hash ROOM:entries; an index (a sorted set: code → expiry time) counts the open rooms.
# Opening is one script, so that two processes cannot both open the 100th room: drop the rooms past their time,
# refuse where the code is open or `most` are, else keep the room with its TTL and its time in the index.
OPEN_SCRIPT = """
local index, room, entries, code, prefix = KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[7]
for _, gone in ipairs(redis.call('ZRANGEBYSCORE', index, '-inf', '(' .. ARGV[3])) do
  redis.call('DEL', prefix .. gone .. ':header', prefix .. gone .. ':entries')
end
redis.call('ZREMRANGEBYSCORE', index, '-inf', '(' .. ARGV[3])
if redis.call('ZSCORE', index, code) then return 'taken' end
if redis.call('ZCARD', index) >= tonumber(ARGV[6]) then return 'full' end
redis.call('DEL', room, entries)
redis.call('HSET', room, 'value', ARGV[2], 'gen', 0, 'puts', 0)
redis.call('PEXPIRE', room, ARGV[5])
redis.call('ZADD', index, ARGV[4], code)
return 'opened'
"""

# Both changes keep the room open: its keys' TTL and its time in the index (ARGV[1], [2], [3]: ms, time, code).
KEEP_OPEN = """
redis.call('PEXPIRE', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[2], ARGV[1])
redis.call('ZADD', KEYS[3], ARGV[2], ARGV[3])
"""

# A header is written only where no header or entry was written since it was read (gen, puts: ARGV[4], [5]).
HEADER_SCRIPT = """
local seen = redis.call('HMGET', KEYS[1], 'gen', 'puts')
if seen[1] ~= ARGV[4] or seen[2] ~= ARGV[5] then return 0 end
redis.call('HSET', KEYS[1], 'value', ARGV[6])
redis.call('HINCRBY', KEYS[1], 'gen', 1)
""" + KEEP_OPEN + "return 1\n"

# An entry is written only where the header (its gen, ARGV[4]) and the entry ('' for none, ARGV[6]) are the ones
# read; a new one only where fewer than ARGV[8] are kept ('full' else).
PUT_SCRIPT = """
if redis.call('HGET', KEYS[1], 'gen') ~= ARGV[4] then return 0 end
local entry = redis.call('HGET', KEYS[2], ARGV[5])
if (entry or '') ~= ARGV[6] then return 0 end
if not entry and redis.call('HLEN', KEYS[2]) >= tonumber(ARGV[8]) then return 'full' end
redis.call('HSET', KEYS[2], ARGV[5], ARGV[7])
redis.call('HINCRBY', KEYS[1], 'puts', 1)
""" + KEEP_OPEN + "return 1\n"

# An app-wide bucket is written in one round trip, only over the value it read ('' for none).
SWAP_SCRIPT = """
if (redis.call('GET', KEYS[1]) or '') ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
"""


class _Seen(NamedTuple):
    """What this process last saw of a room in Redis."""
    stored: Stored
    gen: bytes
    puts: bytes
    at: float  # read at, by the caller's clock
    expires: float


class RedisStore:
    """Rooms in a Redis server, shared by every app process given its URL, and kept through their restarts.

    A read is one round trip, or none where this process read the room in the last READ_AGAIN_S; a header change
    two (read, then HEADER_SCRIPT); a put one (PUT_SCRIPT on the header as this process last saw it), or two where
    that was not recent, and another two where another process changed what it read."""

    def __init__(self, url: str, prefix: str = REDIS_PREFIX):
        import redis.asyncio  # only a Redis-backed app needs the package loaded

        self.errors = redis.asyncio.RedisError
        self.redis = redis.asyncio.Redis.from_url(url, socket_timeout=REDIS_TIMEOUT_S,
                                                  socket_connect_timeout=REDIS_TIMEOUT_S)
        self.url, self.prefix, self.index = url, prefix, f"{prefix}rooms"
        self.open_script = self.redis.register_script(OPEN_SCRIPT)
        self.header_script = self.redis.register_script(HEADER_SCRIPT)
        self.put_script = self.redis.register_script(PUT_SCRIPT)
        self.swap_script = self.redis.register_script(SWAP_SCRIPT)
        # changes take turns within this process: a header change does not retry against this process's puts, and
        # behind a Redis that stopped answering the calls in line are told with the first (`failures`)
        self.lock = asyncio.Lock()
        # calls that found Redis unreachable so far: a change waiting its turn behind one of them is refused at
        # once, so that behind a Redis that stopped answering a class's votes are each told within one timeout,
        # not one timeout after another (a slow Redis that answers fails nothing: its line only waits)
        self.failures = 0
        self.recent: dict[str, _Seen] = {}
        self.writes = 0  # changes this process made: a read that one overtook is not kept as recent

    async def open(self, code: str, header: bytes, now: float, ttl_s: float, most: int) -> str:
        found = await self._call(self.open_script, keys=[self.index, self._room(code), self._entries(code)],
                                 args=[code, header, now, now + ttl_s, _ms(ttl_s), most, f"{self.prefix}room:"])
        return found.decode()

    async def read(self, code: str, now: float) -> Stored | None:
        seen = self.recent.get(code)
        if seen is not None and _read_again(seen, now):
            return seen.stored
        writes = self.writes
        seen = await self._call(self._live, code, now)
        if seen is None:
            return None
        if writes == self.writes:  # kept where no change of ours came in between: then it is not older than ours
            self._remember(code, seen, now)
        return seen.stored

    async def change(self, code: str, change, now: float, ttl_s: float):
        """As MemoryStore.change, across processes."""
        async def attempt():
            while True:
                seen = await self._live(code, now)
                if seen is None:
                    return None
                header, reply = change(seen.stored)
                if header is None or await self.header_script(
                        keys=self._keys(code), args=[*self._open_for(code, now, ttl_s), seen.gen, seen.puts, header]):
                    if header is not None:
                        self.writes += 1
                        self.recent.pop(code, None)  # what changed is read again, with the entries beside it
                    return reply

        return await self._turn(attempt)

    async def put(self, code: str, key: str, change, now: float, ttl_s: float, most: int):
        """As MemoryStore.put, across processes."""
        async def attempt():
            seen = self.recent.get(code)
            remembered = seen is not None and _read_again(seen, now)
            if not remembered:
                seen = await self._live(code, now)
            while seen is not None:
                entry = seen.stored.entries.get(key)
                try:
                    new, reply = change(seen.stored.header, entry)
                except Exception:  # a refusal stands only on the room as Redis holds it, not as remembered
                    if not remembered:
                        raise
                else:
                    done = await self.put_script(keys=self._keys(code), args=[
                        *self._open_for(code, now, ttl_s), seen.gen, key, entry or b"", new, most])
                    if done == b"full":
                        return FULL
                    if done:
                        self.writes += 1
                        self._remember(code, _put(seen, key, new), now)
                        return reply
                seen, remembered = await self._live(code, now), False
            return None

        return await self._turn(attempt)

    async def take(self, name: str, burst: float, every_s: float, now: float) -> bool:
        key = f"{self.prefix}limit:{name}"

        async def attempt():
            while True:
                value = await self.redis.get(key)
                bucket, allowed = take_token(orjson.loads(value) if value else None, burst, every_s, now)
                # a bucket that has had time to fill up again is the same as none: let Redis drop it then
                if await self.swap_script(keys=[key], args=[value or b"", orjson.dumps(bucket),
                                                             _ms(burst * every_s + 1)]):
                    return allowed

        return await self._turn(attempt)

    async def count(self, now: float) -> int:
        return await self._call(self.redis.zcount, self.index, now, "+inf")

    async def _turn(self, attempt):
        """await attempt() when this process's changes before it are done; refused at once where one of those found
        Redis unreachable."""
        failures = self.failures
        async with self.lock:
            if self.failures != failures:
                raise StoreDown(DOWN)
            return await self._call(attempt)

    async def _live(self, code: str, now: float) -> _Seen | None:
        """The room where it is open at `now`, else None: its time, header and entries in one round trip."""
        expires, (header, gen, puts), entries = await (
            self.redis.pipeline(transaction=False).zscore(self.index, code).hmget(self._room(code), "value", "gen", "puts")
            .hgetall(self._entries(code)).execute())
        if header is None or expires is None or expires < now:
            return None
        stored = Stored(header, {key.decode(): entry for key, entry in entries.items()}, int(gen) + int(puts))
        return _Seen(stored, gen, puts, now, expires)

    def _remember(self, code: str, seen: _Seen, now: float):
        """Keep the room as seen (read at seen.at), dropping those read too long ago to be read again at `now`."""
        self.recent = {kept: entry for kept, entry in self.recent.items() if _read_again(entry, now)}
        self.recent[code] = seen

    async def _call(self, call, *args, **kwargs):
        try:
            return await call(*args, **kwargs)
        except self.errors as error:
            self.failures += 1
            raise StoreDown(DOWN) from error

    def _keys(self, code: str) -> list[str]:
        return [self._room(code), self._entries(code), self.index]

    def _open_for(self, code: str, now: float, ttl_s: float) -> list:
        """KEEP_OPEN's arguments: ttl_s more from `now`."""
        return [_ms(ttl_s), now + ttl_s, code]

    def _room(self, code: str) -> str:
        return f"{self.prefix}room:{code}:header"

    def _entries(self, code: str) -> str:
        return f"{self.prefix}room:{code}:entries"


def _put(seen: _Seen, key: str, entry: bytes) -> _Seen:
    """The room as seen, with this process's own entry written in: the reads that may still take the room from memory
    show the entry at once; it stays the read of seen.at, so it is taken from memory no longer than that read was."""
    stored = seen.stored
    return seen._replace(stored=stored._replace(entries={**stored.entries, key: entry}, version=stored.version + 1))


def _read_again(seen: _Seen, now: float) -> bool:
    """Whether a room read at seen.at may be read again from memory at `now`."""
    return 0 <= now - seen.at < READ_AGAIN_S and seen.expires >= now


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
