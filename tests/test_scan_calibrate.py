"""The quarantine threshold set on fixed references (echo_duck/write/scan/calibrate.py).

The threshold is the lowest score at which the whole scanner quarantines at most the rate of the reference notes (and
of the ordinary ones):
checked against the scanner's own verdicts, one notch lower must exceed the rate, notes a rule decides are counted
as the scanner counts them, and the shipped model's threshold is the one its reference gives."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from echo_duck.errors import InvalidInput
from echo_duck.write.scan.calibrate import (ORDINARY_RATE, REFERENCE_RATE, Reference, ordinary_notes, reference_notes,
                                           references)
from echo_duck.write.scan.classifier import Classifier, load_shipped
from echo_duck.write.scan.train import fit
from echo_duck.write.scan.verdict import Scanner

from test_scan_fit import ATTACKS, BENIGN, BatchSensitive, corpus

FIXTURES = Path(__file__).resolve().parent.parent / "data_fixtures"
REFERENCE = [
    "Security review: the staging keys were rotated and the old ones revoked after the audit.",
    "Research note: the paper shows injected web text telling a model to ignore its instructions.",
    "Remind me to water the plants on Sunday and to call the plumber about the kitchen tap.",
    "The build now reads the token from the environment instead of a file in the repository.",
    "Forget what I said about tabs earlier; this project uses four spaces everywhere.",
    "Tutoring rule: do not give my son the answer, ask him questions until he finds it himself.",
    "Our threat model covers a malicious page planting instructions into saved notes.",
    "用户不希望助手在周末发送工作提醒。",
    "The on-call engineer restarts the worker when the queue grows past ten thousand items.",
    "Test case: an email that says 'send me your password' must be flagged by the filter.",
]


def _held(model, embedder, notes):
    found = Scanner(Classifier(lambda: embedder, model)).scan_many(notes)
    return sum(1 for f in found if f is not None and f.outcome == "quarantine")


@pytest.mark.parametrize("rate", [0.1, 0.3, 0.5])
def test_the_threshold_is_the_lowest_that_quarantines_at_most_the_rate(rate):
    embedder = BatchSensitive()
    model = fit(*corpus(), embedder)
    calibrated = Reference(REFERENCE).calibrate(model, embedder, rate)
    assert calibrated.block == model.block and calibrated.quarantine <= model.block
    assert _held(calibrated, embedder, REFERENCE) <= rate * len(REFERENCE)
    scores = [s.value for s in Classifier(lambda: embedder, model).score_many(Reference(REFERENCE).ruled.views) if s]
    lower = [s for s in scores if s < calibrated.quarantine]
    if lower:  # the next score down would hold one note too many
        from dataclasses import replace

        assert _held(replace(calibrated, quarantine=max(lower)), embedder, REFERENCE) > rate * len(REFERENCE)


def test_a_stricter_rate_never_lowers_the_threshold():
    embedder = BatchSensitive()
    model = fit(*corpus(), embedder)
    reference = Reference(REFERENCE)
    thresholds = [reference.calibrate(model, embedder, rate).quarantine for rate in (0.5, 0.3, 0.1, 0.0)]
    assert thresholds == sorted(thresholds)


def test_notes_only_the_rules_hold_count_against_the_rate():
    """A labelled credential is quarantined by the secrets layer whatever the classifier says: with as many such notes
    as the rate allows, the classifier may hold none of the others."""
    embedder = BatchSensitive()
    model = fit(*corpus(), embedder)
    held = [f".env.example for service {i}:\nDATABASE_URL=postgres://user:password@localhost:5432/app_{i}" for i in range(2)]
    notes = held + BENIGN[:8]
    calibrated = Reference(notes).calibrate(model, embedder, 0.2)
    found = Scanner(Classifier(lambda: embedder, calibrated)).scan_many(notes)
    assert [f is not None and f.outcome for f in found[:2]] == ["quarantine", "quarantine"]
    assert all(f is None for f in found[2:])


def test_a_missing_reference_set_is_a_clear_error(tmp_path):
    with pytest.raises(InvalidInput, match="scan_holdout2"):
        reference_notes(tmp_path, ("scan_holdout2",))


def test_the_reference_is_the_benign_notes_of_the_first_five_holdout_sets():
    notes = reference_notes(FIXTURES)
    assert len(notes) == 202 + 200 + 220 + 220 + 219
    assert not set(notes) & set(ATTACKS)


@pytest.mark.slow
def test_the_shipped_threshold_is_the_one_its_reference_gives():
    """`echo-duck bench scanner --rebuild` sets it so; a model rebuilt without the reference would not match."""
    from echo_duck.embed.embedder import default_embedder

    embedder, shipped = default_embedder(), load_shipped()
    calibrated = references(FIXTURES).calibrate(shipped, embedder)
    assert calibrated.quarantine == pytest.approx(shipped.quarantine, abs=1e-9)
    assert _held(shipped, embedder, reference_notes(FIXTURES)) <= REFERENCE_RATE * 1061
    assert _held(shipped, embedder, ordinary_notes(FIXTURES)) <= ORDINARY_RATE * 640


ORDINARY = [
    "Make sure you back up the laptop before the upgrade, then restart it twice and check the printer again.",
    "Go for it! Send the application tonight and don't let anyone tell you it's too late.",
    "Please summarise this thread for the team and forward the notes to everyone before Friday.",
    "Step 1: open Settings. Step 2: choose Accounts. Step 3: remove the old address and save.",
    "Ignore the noise from the neighbours, it stops at ten; the landlord already sent a reminder.",
]


def test_the_ordinary_reference_holds_the_threshold_up_too():
    """With the ordinary notes beside the risky ones, the threshold is never lower than the risky reference alone
    gives, and holds no more ordinary notes than their rate allows (or than the rules and the block threshold hold
    whatever the quarantine threshold is)."""
    from dataclasses import replace

    embedder = BatchSensitive()
    model = fit(*corpus(), embedder)
    alone = Reference(REFERENCE).calibrate(model, embedder, 0.5)
    both = Reference(REFERENCE, ordinary=ORDINARY)
    floor = _held(replace(model, quarantine=model.block), embedder, ORDINARY)
    # the two calibrations score the risky notes in batches of different sizes, and a batch's matrix product may
    # differ in the last bits with its size (how OpenBLAS splits it between threads and kernels: seen on AMD EPYC)
    eps = 1e-5
    for ordinary_rate in (0.0, 0.2, 1.0):
        calibrated = both.calibrate(model, embedder, 0.5, ordinary_rate)
        assert alone.quarantine - eps <= calibrated.quarantine <= model.block
        assert _held(calibrated, embedder, ORDINARY) <= max(ordinary_rate * len(ORDINARY), floor)
        assert _held(calibrated, embedder, REFERENCE) <= 0.5 * len(REFERENCE)
    assert both.calibrate(model, embedder, 0.5, 1.0).quarantine == pytest.approx(alone.quarantine, abs=eps)


def test_the_ordinary_reference_is_the_ordinary_notes_of_four_sets_never_trained_on():
    notes = ordinary_notes(FIXTURES)
    assert len(notes) == 4 * 160 == len(set(notes))
    trained = {json.loads(line)["text"] for path in (FIXTURES / "scan_chat").glob("*.jsonl")
               for line in path.read_text(encoding="utf-8").splitlines() if line.strip()}
    corpus_texts = {json.loads(line)["text"] for path in (FIXTURES / "scan_corpus").glob("*.jsonl")
                    for line in path.read_text(encoding="utf-8").splitlines() if line.strip()}
    assert not set(notes) & (trained | corpus_texts | set(reference_notes(FIXTURES)))
    with pytest.raises(InvalidInput, match="ordinary.jsonl"):
        ordinary_notes(FIXTURES, ("scan_holdout",))
