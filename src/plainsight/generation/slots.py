"""Continuous batching: many prompts decoded through a fixed number of batch slots.

Each prompt is prefilled alone, without padding, so its prefill takes the plain
causal path and costs what it costs one prompt at a time; its keys and values
go straight into its slot of a preallocated cache. Then all slots decode
together, one token each per forward pass. A row that finishes hands its slot
to the next row in the queue at once (a retry it asks for first), so the batch
stays full while prompts wait and a row that stops early costs nothing more;
once the queue is empty, finished rows leave the batch.

Cache layout: every row ends at the same cache index `end`, its tokens are the
positions just before it, and what lies before them (older rows' tokens,
unused space) is masked. So each step writes every row's new key and value at
the same index, and the model's own mask building (causal, padding, sliding
windows) works unchanged: within a row, a distance in cache indices is a
distance in positions. The model sees the window from the start of the oldest
live row to `end`; when `end` reaches the buffer's capacity, the window is
copied to the buffer's front.

Everything lives on the model's device: the cache buffers (in the model's
dtype), the mask and positions, each row's last sampled token, its block of
uniform random numbers (drawn from its own generator when it is prefilled, see
`plainsight.generation.sampling`) and how many of them it has used, and the
tokens the value blockers ban (`SlotBans`: (slot, token) pairs, copied to the
device only when a slot's set changes); sampling works on the scores in
float32. A step copies only the drawn token ids to the host, where the stop
checks run.

A float32 model on a CPU runs its linear layers with weights packed for oneDNN
while decoding (`plainsight.generation.packed_linear`): a step over many slots
then reads each weight once, as a step over one slot does.

A prefix-tuned model (peft) brings its prefix as keys and values: they are
copied in front of each prompt, and the prompt counts its positions on from the
prefix's length, as peft does.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch
from transformers.cache_utils import Cache, DynamicCache, DynamicLayer

from plainsight.generation.blocking import ValueBlocker
from plainsight.generation.packed_linear import packed_linears
from plainsight.generation.sampling import NucleusSampler, SlotBans, uniform_block
from plainsight.scheduling import slot_cache_positions


@dataclass
class Row:
    """One document to decode; `generated` fills as it is sampled."""

    key: object  # the caller's handle
    prompt_ids: list[int]
    generator: torch.Generator  # its random numbers: a block of max_new_tokens is drawn at its prefill
    blocker: ValueBlocker | None = None
    generated: list[int] = field(default_factory=list)


class _WindowLayer(DynamicLayer):
    """One layer's keys and values: writes go into preallocated buffers, reads see [low, end)."""

    def __init__(self, keys: torch.Tensor, values: torch.Tensor, low: int, end: int):
        super().__init__()
        self.buffer_keys, self.buffer_values = keys, values
        self.low, self.end = low, end
        self.keys, self.values = keys[:, :, low:end], values[:, :, low:end]
        self.dtype, self.device = keys.dtype, keys.device
        self.is_initialized = True

    def lazy_initialization(self, key_states, value_states) -> None:
        pass  # the buffers exist already

    def update(self, key_states, value_states, *args, **kwargs):
        stop = self.end + key_states.shape[-2]
        self.buffer_keys[:, :, self.end : stop] = key_states
        self.buffer_values[:, :, self.end : stop] = value_states
        self.end = stop
        self.keys = self.buffer_keys[:, :, self.low : stop]
        self.values = self.buffer_values[:, :, self.low : stop]
        return self.keys, self.values

    def get_seq_length(self) -> int:
        return self.end - self.low


def _keep_rows(buffer: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """The rows `index` of `buffer`, moved to its front in place: the view of them."""
    buffer[: len(index)] = buffer.index_select(0, index)
    return buffer[: len(index)]


def base_model(model):
    """The causal LM itself: a prefix-tuned peft model's base model, or the model."""
    return model.get_base_model() if hasattr(model, "peft_config") else model


def prefix_tokens(model) -> int:
    """Virtual tokens of a prefix-tuned peft model's prefix; 0 for any other model."""
    if not hasattr(model, "peft_config"):
        return 0
    return model.active_peft_config.num_virtual_tokens


def prefix_key_values(model) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """A prefix-tuned peft model's prefix as (keys, values) per layer, [1, heads, tokens, head_dim];
    empty for any other model."""
    if not hasattr(model, "peft_config"):
        return []
    with torch.no_grad():
        prompt = model.get_prompt(batch_size=1)
    if isinstance(prompt, Cache):
        return [(layer.keys, layer.values) for layer in prompt.layers]
    return [(pair[0], pair[1]) for pair in prompt]


def _kv_shapes(model) -> list[tuple[int, int, torch.dtype]]:
    """(heads, head_dim, dtype) of each layer's cache, read off a one-token forward pass."""
    cache = DynamicCache()
    parameter = next(model.parameters())
    with torch.no_grad():
        model(
            input_ids=torch.zeros(1, 1, dtype=torch.long, device=parameter.device),
            past_key_values=cache,
            use_cache=True,
            logits_to_keep=1,
        )
    return [(layer.keys.shape[1], layer.keys.shape[-1], layer.keys.dtype) for layer in cache.layers]


class SlotDecoder:
    """Samples documents for queued rows through `slots` batch slots (see the module docstring).

    A row ends at an end-of-sequence token, when its text holds `stop_string`, or after
    `max_new_tokens`; `on_finished(row)` then gets it and may return a row (a retry), which takes the
    next free slot before the rows still queued.
    """

    def __init__(
        self, model, tokenizer, sampler: NucleusSampler, max_new_tokens: int, slots: int, stop_string: str
    ):
        self.lm = base_model(model)
        self.prefix = prefix_key_values(model)
        self.tokenizer = tokenizer
        self.sampler = sampler
        self.max_new_tokens = max_new_tokens
        self.slots = slots
        self.stop_string = stop_string
        eos = model.generation_config.eos_token_id
        self.eos = set(eos if isinstance(eos, list) else [] if eos is None else [eos])
        self.device = next(self.lm.parameters()).device
        self.kv_shapes: list[tuple[int, int, torch.dtype]] | None = None  # read on the first run
        self.occupancy: list[int] = []  # rows in the batch at each step of the last run

    @property
    def prefix_length(self) -> int:
        return self.prefix[0][0].shape[-2] if self.prefix else 0

    @torch.inference_mode()
    def run(self, rows: Sequence[Row], on_finished: Callable[[Row], Row | None]) -> int:
        """Decode every row (and every row `on_finished` queues); returns the number of tokens sampled."""
        if not rows:
            return 0
        if self.kv_shapes is None:
            self.kv_shapes = _kv_shapes(self.lm)
        longest = self.prefix_length + max(len(row.prompt_ids) for row in rows)
        batch = _Batch(self, longest, deque(rows), on_finished)
        self.occupancy = batch.occupancy
        with packed_linears(self.lm, rows_hint=self.slots):
            return batch.decode()

    def finished(self, row: Row) -> bool:
        token = row.generated[-1]
        if token in self.eos or len(row.generated) >= self.max_new_tokens:
            return True
        # enough tokens for the stop string even at one byte per token, and its neighbours
        tail = self.tokenizer.decode(row.generated[-4 * len(self.stop_string) - 2 :])
        return self.stop_string in tail


class _Batch:
    """The state of one `SlotDecoder.run`: the cache buffers and the row in each slot."""

    def __init__(self, decoder: SlotDecoder, longest: int, queue: deque, on_finished):
        self.decoder, self.queue, self.on_finished = decoder, queue, on_finished
        self.longest = longest  # every prompt (with the prefix) fits before `end`
        capacity = slot_cache_positions(longest, decoder.max_new_tokens)
        slots, device = decoder.slots, decoder.device
        self.keys = [
            torch.zeros(slots, heads, capacity, dim, dtype=dtype, device=device)
            for heads, dim, dtype in decoder.kv_shapes
        ]
        self.values = [torch.zeros_like(keys) for keys in self.keys]
        self.mask = torch.zeros(slots, capacity, dtype=torch.bool, device=device)
        self.rows: list[Row | None] = [None] * slots
        self.starts = [0] * slots
        self.positions = torch.zeros(slots, dtype=torch.long, device=device)  # position id of the next token
        self.last_tokens = torch.zeros(
            slots, dtype=torch.long, device=device
        )  # each row's last sampled token
        self.uniforms = torch.zeros(slots, decoder.max_new_tokens, device=device)  # each row's random numbers
        self.used = torch.zeros(slots, dtype=torch.long, device=device)  # random numbers each row has used
        self.bans = SlotBans(slots, device)
        self.occupancy: list[int] = []  # rows in the batch at each step
        self.end = longest
        self.sampled = 0

    @property
    def capacity(self) -> int:
        return self.mask.shape[1]

    def decode(self) -> int:
        while True:
            self.fill_free_slots()
            if all(row is None for row in self.rows):
                return self.sampled
            self.drop_free_slots()
            self.step()

    def fill_free_slots(self) -> None:
        """Prefill queued rows into free slots, each sampling its first token; a row done at once frees
        it again."""
        for slot in range(len(self.rows)):
            while self.rows[slot] is None and self.queue:
                row = self.queue.popleft()
                scores = self.prefill(slot, row)
                self.rows[slot] = row
                self.sample(slice(slot, slot + 1), scores)

    def prefill(self, slot: int, row: Row) -> torch.Tensor:
        """Write the row's prefix and prompt into `slot`, ending at `end`; the scores of its first token."""
        decoder = self.decoder
        start = self.end - decoder.prefix_length - len(row.prompt_ids)
        layers = []
        for (keys, values), prefix in zip(
            zip(self.keys, self.values), decoder.prefix or [None] * len(self.keys)
        ):
            layer = _WindowLayer(keys[slot : slot + 1], values[slot : slot + 1], start, start)
            if prefix is not None:
                layer.update(*prefix)
            layers.append(layer)
        input_ids = torch.tensor([row.prompt_ids], dtype=torch.long, device=decoder.device)
        # no attention mask: one unpadded row is plain causal attention, the prefix before it in view
        output = decoder.lm(
            input_ids=input_ids, past_key_values=Cache(layers=layers), use_cache=True, logits_to_keep=1
        )
        self.mask[slot] = False
        self.mask[slot, start : self.end] = True
        self.starts[slot] = start
        self.positions[slot] = self.end - start
        self.uniforms[slot] = uniform_block(row.generator, decoder.max_new_tokens, decoder.device)
        self.used[slot] = 0
        return output.logits[:, -1]

    def drop_free_slots(self) -> None:
        """With the queue empty, rows that finished leave the batch (one copy, at most once per row).
        The cache is compacted within its own buffers, one layer at a time: new buffers would need half
        the cache's memory again while the old ones live (a 75.5 GB peak for a 48.5 GB cache on an H100),
        more than `batch_size: auto` leaves free."""
        live = [slot for slot, row in enumerate(self.rows) if row is not None]
        if len(live) == len(self.rows):
            return
        index = torch.tensor(live, device=self.decoder.device)
        self.keys = [_keep_rows(keys, index) for keys in self.keys]
        self.values = [_keep_rows(values, index) for values in self.values]
        self.mask, self.positions, self.last_tokens = (
            self.mask[index],
            self.positions[index],
            self.last_tokens[index],
        )
        self.uniforms, self.used = self.uniforms[index], self.used[index]
        self.bans.keep(live)
        self.rows = [self.rows[slot] for slot in live]
        self.starts = [self.starts[slot] for slot in live]

    def step(self) -> None:
        """One token for every row: the forward pass on the last sampled tokens, then sampling."""
        if self.end == self.capacity:
            self.move_window_to_front()
        low = min(self.starts)
        self.occupancy.append(len(self.rows))
        self.mask[:, self.end] = True
        layers = [_WindowLayer(keys, values, low, self.end) for keys, values in zip(self.keys, self.values)]
        output = self.decoder.lm(
            input_ids=self.last_tokens[:, None],
            attention_mask=self.mask[:, low : self.end + 1],
            position_ids=self.positions[:, None],
            past_key_values=Cache(layers=layers),
            use_cache=True,
        )
        self.end += 1
        self.positions += 1
        self.sample(slice(None), output.logits[:, -1])

    def sample(self, slots: slice, scores: torch.Tensor) -> None:
        """Draw the next token of the rows in `slots` (one row of `scores` each); hand finished rows back."""
        rows, numbers = self.rows[slots], range(len(self.rows))[slots]
        scores = scores.float()
        for slot, row in zip(numbers, rows):
            self.bans.update(slot, row.blocker.banned(row.generated) if row.blocker is not None else ())
        self.bans.apply(scores, numbers)
        uniforms = self.uniforms[slots].gather(1, self.used[slots, None])[:, 0]
        drawn = self.decoder.sampler.draw(scores, uniforms)
        self.last_tokens[slots] = drawn
        self.used[slots] += 1
        self.sampled += len(rows)
        for slot, row, token in zip(numbers, rows, drawn.tolist()):
            row.generated.append(token)
            if self.decoder.finished(row):
                self.rows[slot] = None
                retry = self.on_finished(row)
                if retry is not None:
                    self.queue.appendleft(retry)

    def move_window_to_front(self) -> None:
        """Copy the live window to the buffers' front; at least `longest` positions stay before `end`."""
        shift = min(min(self.starts), self.end - self.longest)
        length = self.end - shift
        for buffer in (*self.keys, *self.values):
            buffer[:, :, :length] = buffer[:, :, shift : self.end].clone()
        self.mask[:, :length] = self.mask[:, shift : self.end].clone()
        self.mask[:, length:] = False
        self.starts = [start - shift for start in self.starts]
        self.end = length
