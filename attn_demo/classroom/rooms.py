"""The rooms of "Predict, then reveal": a class guesses, step by step, which English piece a model looks at.

A teacher opens a room on one translation (its English pieces, its French pieces and α, one row per step)
and gets a short code for the class and a key for themselves. Each student's phone votes for one English
piece per step (a new vote replaces the old); the teacher's key reveals the model's α for the step and moves
the room on. After the last step the room sums up where the class and the model agreed.

The rules live here, once; the rooms live in a store (attn_demo.classroom.stores): this process's memory, or a
Redis server that several app processes share and that outlives them. A room is kept as its header (the Room
below) and one small Ballot a phone (its vote and its vote bucket); each change reads what its rule needs, applies
the rule and writes the header, or the phone's ballot, atomically, so votes arriving together, on one process or
several, each count once. A room closes IDLE_S after its last vote or move. Every refusal is a ClassroomError whose
message is fit for a student's screen, and changes nothing.
"""
import os
import re
import secrets
import time
from dataclasses import dataclass, field, fields

import orjson

from attn_demo.classroom.stores import FULL, OPENED, ROOMS_ENV, StoreDown, Stored, store_named, take_token

# Codes are read off a projector and typed on a phone: no 0/O, 1/I/L. 31 letters, 6 of them: 31⁶ ≈ 8.9 × 10⁸
# codes. Wrong codes are refused beyond WRONG_CODES_PER_S for the whole app, so a guesser gets at most
# 10 × 7200 = 72,000 tries in a class's two hours: a chance of 1 in 12,000 of finding a given room, and
# 1 in 120 of finding any of MAX_ROOMS rooms, which would let them vote in it, nothing more.
CODE_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
CODE_LENGTH = 6
CODE = re.compile(f"[{CODE_ALPHABET}]{{{CODE_LENGTH}}}")  # what can name a room (and a store's key)
WRONG_CODES_PER_S = 10
IDLE_S = 2 * 3600  # a room without a vote, a reveal or a move for this long is closed
MAX_ROOMS = 100
MAX_VOTERS = 300  # phones in one room
VOTE_BURST, VOTE_EVERY_S = 5, 2.0  # a phone may vote 5 times at once, then once every 2 s
VOTER_ID = re.compile(r"[A-Za-z0-9_-]{8,64}")  # the random id a page keeps (never a name)
AGREEMENT = ("α on the class's picks: the α of the piece each vote chose, averaged over the votes "
             "(Σ over pieces of α_j × the share of the votes on j); 1 when every vote is on a piece that took all of α.")
LESSON = ("Where the class and the model disagree, look at what the model looked at: a step resting on </s> "
          "(a first article, punctuation) looks at no English piece in particular, and an α that is no word's "
          "translation is where attention stops being an explanation.")


class ClassroomError(ValueError):
    """A refusal; its message is what the student or teacher is told."""


class NoSuchRoom(ClassroomError):
    pass


class WrongKey(ClassroomError):
    pass


class BadVote(ClassroomError):
    pass


class TooMany(ClassroomError):
    """A bound reached: rooms, phones in a room, votes from one phone, or wrong codes app-wide."""


class NoAttention(ClassroomError):
    pass


class RoomsDown(ClassroomError):
    """The store of the rooms cannot be reached."""


AS_READ = {"as_read": True}  # a Room field read beside the header, never written in it


@dataclass
class Room:
    code: str
    key: str
    model: str  # the model's key, for the teacher's screen
    english: list[str]  # S pieces, </s> last
    french: list[str]  # T pieces, </s> last: step t writes french[t - 1]
    alpha: list[list[float]]  # (T, S): α at each step
    step: int = 1
    revealed: bool = False
    finished: bool = False
    tallies: dict = field(default_factory=dict)  # str(step) → the votes per English piece, counted on moving on
    votes: dict = field(default_factory=dict, metadata=AS_READ)  # voter → piece index, the current step's
    version: int = field(default=0, metadata=AS_READ)  # moves with every change: a page redraws when it moved

    def header(self) -> bytes:
        """The room as its store keeps it, without the ballots."""
        return orjson.dumps({f.name: getattr(self, f.name) for f in fields(self) if not f.metadata})

    @classmethod
    def from_header(cls, header: bytes) -> "Room":
        return cls(**orjson.loads(header))

    @classmethod
    def from_stored(cls, stored: Stored) -> "Room":
        """The room with the current step's votes from the phones' ballots."""
        room = cls.from_header(stored.header)
        room.version = stored.version
        for voter, entry in stored.entries.items():
            ballot = Ballot.from_bytes(entry)
            if ballot.step == room.step:
                room.votes[voter] = ballot.piece
        return room

    def counts(self, step: int) -> list[int]:
        if str(step) in self.tallies:
            return self.tallies[str(step)]
        counts = [0] * len(self.english)
        for piece in self.votes.values() if step == self.step else ():
            counts[piece] += 1
        return counts

    def argmax(self, step: int) -> int:
        row = self.alpha[step - 1]
        return row.index(max(row))

    def step_result(self, step: int) -> dict:
        """How the class's votes at `step` compare with the model's α there."""
        counts, best = self.counts(step), self.argmax(step)
        votes, row = sum(counts), self.alpha[step - 1]
        top = max(counts)
        return {"step": step, "written": self.french[step - 1], "argmax": best, "votes": votes,
                "picked_argmax": counts[best],
                "alpha_on_picks": round(sum(a * n for a, n in zip(row, counts)) / votes, 4) if votes else None,
                "class_picks": [j for j, n in enumerate(counts) if n == top] if votes else [],
                # the class's most-voted piece (any of them, on a tie) is the model's argmax
                "agreed": counts[best] == top if votes else None}

    def view(self, with_counts: bool) -> dict:
        """What a page draws: the step, the sentence and the French so far; α and how the class did once revealed;
        the votes per piece where with_counts (the projector; the phones only once revealed, so as not to sway them)."""
        shown = self.revealed or self.finished
        view = {"room": self.code, "model": self.model, "version": self.version, "step": self.step,
                "steps": len(self.french), "english": self.english, "french": self.french[:self.step - 1],
                "revealed": shown, "finished": self.finished,
                "alpha": self.alpha[self.step - 1] if shown else None,
                "counts": self.counts(self.step) if with_counts or shown else None,
                "result": self.step_result(self.step) if shown else None,
                "summary": None}
        if self.finished:
            view["summary"] = [self.step_result(t) for t in range(1, len(self.french) + 1)]
        return view


@dataclass
class Ballot:
    """One phone's entry in its room: its vote, and its vote bucket (take_token) across the steps."""
    step: int
    piece: int
    bucket: list  # [tokens, at]

    def to_bytes(self) -> bytes:
        return orjson.dumps([self.step, self.piece, *self.bucket])

    @classmethod
    def from_bytes(cls, entry: bytes) -> "Ballot":
        step, piece, *bucket = orjson.loads(entry)
        return cls(step, piece, bucket)


def step_number(value, what: str = "step") -> int:
    """A whole number from a page or a client (which may send 3.0), or a BadVote naming `what`."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise BadVote(f"The {what} must be a whole number, not {str(value)[:20]!r}.") from None
    if not number.is_integer():
        raise BadVote(f"The {what} must be a whole number, not {str(value)[:20]!r}.")
    return int(number)




class Rooms:
    """Every open room of the app, kept in `store` (attn_demo.classroom.stores: memory by default); each method is a
    coroutine for the server's event loop, one atomic read or change of one room, so concurrent requests, from this
    process or another, see whole changes."""

    def __init__(self, store=None, clock=time.time, max_rooms: int = MAX_ROOMS, max_voters: int = MAX_VOTERS,
                 idle_s: float = IDLE_S):
        # the clock is wall time: rooms kept in Redis are read by other processes and after a restart
        self.store = store or store_named(os.environ.get(ROOMS_ENV, "memory"))
        self.clock, self.max_rooms, self.max_voters, self.idle_s = clock, max_rooms, max_voters, idle_s

    async def open(self, english: list[str], french: list[str], alpha, model: str = "") -> tuple[str, str]:
        """A new room on one translation (α (T, S), as Translation.attention); its code and the teacher's key."""
        if alpha is None:
            raise NoAttention(f"{model or 'This model'} has no attention, so there is no α to guess: pick a model with "
                              "attention to open a room.")
        alpha = [[round(float(a), 4) for a in row] for row in alpha]
        if len(alpha) != len(french) or any(len(row) != len(english) for row in alpha):
            raise ValueError(f"α is {len(alpha)} × {len(alpha[0]) if alpha else 0}, not {len(french)} × {len(english)}")
        key, now = secrets.token_urlsafe(24), self.clock()
        while True:  # a code already open is drawn again
            code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
            room = Room(code, key, model, list(english), list(french), alpha)
            found = await self._stored(self.store.open, code, room.header(), now, self.idle_s, self.max_rooms)
            if found == OPENED:
                return code, key
            if found == FULL:
                raise TooMany(f"{self.max_rooms} rooms are open on this app, the most it holds: try again when one "
                              f"closes (a room closes after {self.idle_s / 3600:g} h without a vote).")

    async def state(self, code) -> dict:
        """What a phone shows: the votes only once the step is revealed."""
        return (await self._read(code)).view(with_counts=False)

    async def tally(self, code) -> dict:
        """What the projector shows: the votes per English piece as they arrive."""
        return (await self._read(code)).view(with_counts=True)

    async def vote(self, code, voter, step, piece) -> str:
        """Record one phone's pick for the current step (replacing its earlier one); a line saying what was recorded."""
        if not isinstance(voter, str) or not VOTER_ID.fullmatch(voter):
            raise BadVote("This page's voter id is missing or malformed: reload the page to get a new one.")
        step, piece = step_number(step), step_number(piece, "piece")
        code, now = self._code(code), self.clock()

        def vote(header: bytes, entry: bytes | None) -> tuple[bytes, tuple]:
            room = Room.from_header(header)
            if room.finished:
                raise BadVote("The activity is over: there is nothing left to vote on.")
            if step != room.step:
                raise BadVote(f"The room is at step {room.step}, not {step}: vote again for step {room.step}.")
            if room.revealed:
                raise BadVote(f"Step {step} is already revealed: wait for the next step.")
            if not 0 <= piece < len(room.english):
                raise BadVote(f"There is no English piece {piece}: pick one of the {len(room.english)} pieces shown.")
            bucket, allowed = take_token(Ballot.from_bytes(entry).bucket if entry else None, VOTE_BURST,
                                         VOTE_EVERY_S, now)
            if not allowed:
                raise TooMany("Too many votes from this phone: wait a couple of seconds, then vote again.")
            line = f"Your vote for step {step}: {room.english[piece]} (tap another piece to change it)."
            return Ballot(step, piece, bucket).to_bytes(), (line,)  # in a 1-tuple: the store's None means no room

        voted = await self._in_room(code, now, self.store.put, voter, vote, now, self.idle_s, self.max_voters)
        if voted == FULL:  # the phone is not in yet, and the room has its most
            raise TooMany(f"This room already has {self.max_voters} phones, the most it takes.")
        return voted[0]

    async def reveal(self, code, key) -> dict:
        """Show the model's α for the current step; the projector's view after it."""
        def reveal(room: Room, now: float) -> dict:
            self._check_key(room, key)
            room.revealed = True
            return room.view(with_counts=True)

        return await self._change(code, reveal)

    async def next(self, code, key) -> dict:
        """Move on to the next step, or after the last one, to the summary; the projector's view after it."""
        def move(room: Room, now: float) -> dict:
            self._check_key(room, key)
            if room.finished:
                raise ClassroomError("The activity is over: open a new room for another sentence.")
            room.tallies[str(room.step)] = room.counts(room.step)  # the ballots go on to the next step
            if room.step == len(room.french):
                room.finished = True
            else:
                room.step, room.revealed = room.step + 1, False
            return room.view(with_counts=True)

        return await self._change(code, move)

    async def count(self) -> int:
        """How many rooms are open."""
        return await self._stored(self.store.count, self.clock())

    @staticmethod
    def _check_key(room: Room, key):
        if not isinstance(key, str) or not secrets.compare_digest(key.encode(), room.key.encode()):
            raise WrongKey("Only the teacher's page that opened this room can reveal or move it on.")

    async def _read(self, code) -> Room:
        code, now = self._code(code), self.clock()
        return Room.from_stored(await self._in_room(code, now, self.store.read, now))

    async def _change(self, code, rule):
        """rule(room, now) applied to the open room with this code, atomically; a change moves its version and keeps
        the room open IDLE_S more; what the rule raises leaves the room as it was."""
        code, now = self._code(code), self.clock()

        def change(stored: Stored):
            room = Room.from_stored(stored)
            room.version += 1  # as the reply's view will be read again
            reply = rule(room, now)
            return room.header(), (reply,)  # in a 1-tuple: the store's None means no room

        return (await self._in_room(code, now, self.store.change, change, now, self.idle_s))[0]

    async def _in_room(self, code: str, now: float, call, *args):
        """await call(code, *args): the store's answer for the open room `code`; where it has none (no such room is
        open, or the code cannot name one), _no_room's refusal."""
        found = await self._stored(call, code, *args) if CODE.fullmatch(code) else None
        if found is None:
            await self._no_room(code, now)
        return found

    async def _no_room(self, code: str, now: float):
        """NoSuchRoom, or where too many wrong codes came in just now (from any phone, on any process), TooMany."""
        if not await self._stored(self.store.take, "wrong-codes", WRONG_CODES_PER_S, 1 / WRONG_CODES_PER_S, now):
            raise TooMany("Too many wrong room codes were tried just now: wait a few seconds, then check the code.")
        raise NoSuchRoom(f"There is no open room {code!r}: check the code with your teacher (a room closes after "
                         f"{self.idle_s / 3600:g} h without a vote).")

    @staticmethod
    def _code(code) -> str:
        """The code as typed (any case, spaces ignored), cut short: a 10,000-character one is not worth reading."""
        return "".join(str(code or "")[:4 * CODE_LENGTH].split()).upper()[:2 * CODE_LENGTH]

    @staticmethod
    async def _stored(call, *args):
        try:
            return await call(*args)
        except StoreDown as error:
            raise RoomsDown(str(error)) from None
