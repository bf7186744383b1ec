"""A long table crosses from the background worker to the server in slices, decoded while no page is drawn.

Unpickling the Review page's pairs table of a 20,000-pair collection (12.7 MB) took 330 ms in one C call, the
interpreter's lock held all along: a page drawn meanwhile waited that long (a probe thread in the benchmark's
server saw 200-600 ms stalls).  Slices let the page's thread in between, and the server decodes them while no
page run is going on; a page that needs the value first decodes what is left itself.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import partial

from pooljudge.transfer import SLICE_ITEMS, Sliced, in_slices
from pooljudge.ui.background import Background, Decoding


@dataclass
class Row:
    n: int
    labels: dict[str, int]


def rows(count: int) -> list[Row]:
    return [Row(n, {"ann1": n % 4}) for n in range(count)]


def test_a_long_list_is_pickled_in_slices_and_a_short_one_as_it_is():
    sliced = in_slices(partial(rows, 2 * SLICE_ITEMS + 1))
    assert isinstance(sliced, Sliced) and len(sliced.slices) == 3
    assert Decoding(sliced).value() == rows(2 * SLICE_ITEMS + 1)
    assert in_slices(partial(rows, SLICE_ITEMS)) == rows(SLICE_ITEMS)
    assert in_slices(partial(dict, a=1)) == {"a": 1}


def test_the_worker_hands_a_long_table_over_in_slices_and_the_page_reads_it_whole():
    bg = Background(processes=True)
    shown = bg.get("slot", 1, partial(rows, 3 * SLICE_ITEMS), wait=60)
    assert shown is not None and isinstance(shown.payload, Decoding)
    assert shown.value == rows(3 * SLICE_ITEMS)


def test_slices_are_decoded_only_while_no_page_is_drawn(page_run):
    decoding = Decoding(in_slices(partial(rows, 4 * SLICE_ITEMS)))
    decoder = decoding.start(patience_s=60)
    time.sleep(0.5)
    assert decoding.decoded == 0  # the page run goes on: not one slice taken
    page_run.set()
    decoder.join(60)
    assert decoding.decoded == 4 and decoding.value() == rows(4 * SLICE_ITEMS)


def test_the_decoder_goes_on_after_its_patience(page_run):
    """A server that draws pages without a pause (an annotator labelling) still gets its tables decoded."""
    decoding = Decoding(in_slices(partial(rows, 2 * SLICE_ITEMS)))
    decoding.start(patience_s=0.05).join(60)
    assert decoding.decoded == 2


def test_a_page_reads_a_value_still_held_back_at_once(page_run):
    decoding = Decoding(in_slices(partial(rows, 3 * SLICE_ITEMS)))
    decoder = decoding.start(patience_s=60)
    assert decoding.value() == rows(3 * SLICE_ITEMS)  # decoded by the reader, not waiting for the page run
    assert decoding.decoded == 3
    page_run.set()
    decoder.join(60)
    assert decoding.value() == rows(3 * SLICE_ITEMS)  # the decoder found nothing left


def test_a_table_replaced_before_it_is_decoded_is_not_decoded_in_the_background(page_run):
    """Under steady labelling a newer table often arrives first: decoding the old one would be CPU for nothing."""
    decoding = Decoding(in_slices(partial(rows, 3 * SLICE_ITEMS)))
    decoder = decoding.start(patience_s=60)
    time.sleep(0.2)
    decoding.cancel()
    page_run.set()
    decoder.join(60)
    assert not decoder.is_alive() and decoding.decoded == 0
    assert decoding.value() == rows(3 * SLICE_ITEMS)  # whoever still holds it can read it


def test_the_slot_cancels_the_decoding_of_the_snapshot_it_replaces(monkeypatch, page_run):
    cancelled: list[int] = []
    monkeypatch.setattr(Decoding, "cancel", lambda self: cancelled.append(len(self._slices)))
    bg = Background(processes=True)  # the page run: nothing is decoded in the background meanwhile
    first = bg.get("slot", 1, partial(rows, 2 * SLICE_ITEMS), wait=60)
    second = bg.get("slot", 2, partial(rows, 3 * SLICE_ITEMS), wait=60)
    page_run.set()
    assert first is not None and second is not None and second.key == 2
    assert cancelled == [2]  # the first table's decoding, when the second replaced it
    assert second.value == rows(3 * SLICE_ITEMS)
