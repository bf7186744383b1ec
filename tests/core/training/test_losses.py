"""core.training.losses on tensors whose losses (and gradients) are computed by hand in the comments."""

from __future__ import annotations

import math

import pytest
import torch

from core.training.losses import in_batch_contrastive, listwise_kl, listwise_softmax, pointwise_bce

LN2, LN3 = math.log(2), math.log(3)


def t(rows) -> torch.Tensor:
    return torch.tensor(rows, dtype=torch.float64)


# --------------------------------------------------------------------------- pointwise BCE


def test_pointwise_bce_by_hand():
    # s = (0, ln 3), y = (1, 0): sigma(0) = 1/2, sigma(ln 3) = 3/4
    # L = ( -log(1/2) - log(1 - 3/4) ) / 2 = (ln 2 + ln 4) / 2 = 1.5 ln 2
    assert pointwise_bce(t([0.0, LN3]), t([1, 0])).item() == pytest.approx(1.5 * LN2)
    # grades against the level: 2 >= 2 is relevant, 1 < 2 is not, so the same targets as above
    assert pointwise_bce(t([0.0, LN3]), t([2, 1]), level=2).item() == pytest.approx(1.5 * LN2)
    # at level 1 grade 1 is relevant too: ( ln 2 - log(3/4) ) / 2
    assert pointwise_bce(t([0.0, LN3]), t([2, 1]), level=1).item() == pytest.approx((LN2 - math.log(0.75)) / 2)


def test_pointwise_bce_gradient_and_shapes():
    scores = t([0.0, LN3]).requires_grad_()
    pointwise_bce(scores, t([1, 0])).backward()
    # dL/ds_i = (sigma(s_i) - y_i) / N = ((1/2 - 1) / 2, (3/4 - 0) / 2)
    assert scores.grad.tolist() == pytest.approx([-0.25, 0.375])
    with pytest.raises(ValueError, match=r"scores \(2,\) and grades \(3,\)"):
        pointwise_bce(t([0.0, 1.0]), t([1, 0, 0]))


# --------------------------------------------------------------------------- listwise softmax


def test_listwise_softmax_by_hand():
    # row [2, 1, 0]: -log( e^2 / (e^2 + e + 1) ) = log(1 + e^-1 + e^-2)
    one = math.log(1 + math.exp(-1) + math.exp(-2))
    assert listwise_softmax(t([[2, 1, 0]])).item() == pytest.approx(one)
    # a second row [0, 0, 0]: log 3; the loss is the mean over the rows
    assert listwise_softmax(t([[2, 1, 0], [0, 0, 0]])).item() == pytest.approx((one + LN3) / 2)
    # the positive is column 0: [0, 1, 2] is the worst order, log(1 + e + e^2)
    assert listwise_softmax(t([[0, 1, 2]])).item() == pytest.approx(math.log(1 + math.e + math.e**2))


def test_listwise_softmax_mask_leaves_padding_out():
    # row [1, 1, 100] with the 100 padded out: a softmax over [1, 1] -> log 2 (100 would give ~99)
    mask = torch.tensor([[True, True, False], [True, True, True]])
    loss = listwise_softmax(t([[1, 1, 100], [0, 0, 0]]), mask)
    assert loss.item() == pytest.approx((LN2 + LN3) / 2)
    assert listwise_softmax(t([[1, 1, 100]]), mask[:1]).item() == pytest.approx(LN2)


def test_listwise_softmax_gradient_and_shapes():
    scores = t([[0, 0]]).requires_grad_()
    listwise_softmax(scores).backward()
    # dL/ds = softmax(s) - onehot(0) = (1/2 - 1, 1/2)
    assert scores.grad[0].tolist() == pytest.approx([-0.5, 0.5])
    with pytest.raises(ValueError, match=r"got shape \(3,\)"):
        listwise_softmax(t([2, 1, 0]))


# --------------------------------------------------------------------------- in-batch contrastive


E = torch.eye(2, dtype=torch.float64)  # two orthonormal vectors e1, e2


def test_in_batch_contrastive_without_hard_negatives():
    # q_i = p_i = e_i: logits = I; each query: -log( e / (e + 1) ) = log(1 + e^-1)
    assert in_batch_contrastive(E, E).item() == pytest.approx(math.log(1 + math.exp(-1)))


def test_in_batch_contrastive_with_hard_negatives():
    # query 1's hard negative is e2, query 2's is e1: candidates (e1, e2, e2, e1)
    # q1 logits (1, 0, 0, 1): -log( e / (2e + 2) ) = log 2 + log(1 + e^-1); q2 the same by symmetry
    hard = torch.stack([E[1:2], E[0:1]])  # (B=2, H=1, d=2)
    assert hard.shape == (2, 1, 2)
    expected = LN2 + math.log(1 + math.exp(-1))
    assert in_batch_contrastive(E, E, hard).item() == pytest.approx(expected)
    # no hard negatives at all (H = 0) is the in-batch loss
    empty = torch.zeros((2, 0, 2), dtype=torch.float64)
    assert in_batch_contrastive(E, E, empty).item() == pytest.approx(math.log(1 + math.exp(-1)))


def test_in_batch_contrastive_temperature():
    # tau = 1/2 doubles the logits: log(1 + e^-2); with the hard negatives log 2 + log(1 + e^-2)
    assert in_batch_contrastive(E, E, temperature=0.5).item() == pytest.approx(math.log(1 + math.exp(-2)))
    hard = torch.stack([E[1:2], E[0:1]])
    assert in_batch_contrastive(E, E, hard, temperature=0.5).item() == pytest.approx(LN2 + math.log(1 + math.exp(-2)))


def test_in_batch_contrastive_errors():
    with pytest.raises(ValueError, match="differ in shape"):
        in_batch_contrastive(E, E[:1])
    with pytest.raises(ValueError, match="temperature must be positive"):
        in_batch_contrastive(E, E, temperature=0)


# --------------------------------------------------------------------------- RocketQAv2 listwise KL


def test_listwise_kl_is_zero_for_equal_distributions():
    scores = t([[1.0, -2.0, 0.5], [3.0, 3.0, 0.0]])
    assert listwise_kl(scores, scores).item() == pytest.approx(0.0, abs=1e-12)
    # a shift per query leaves both softmax distributions, hence the loss, unchanged
    assert listwise_kl(scores + 7.0, scores).item() == pytest.approx(0.0, abs=1e-12)


def test_listwise_kl_by_hand_and_its_direction():
    # row 1: cross (ln 3, 0) -> s~_ce = (3/4, 1/4); dual (0, 0) -> s~_de = (1/2, 1/2)
    #   KL(ce || de) = 3/4 ln(3/2) + 1/4 ln(1/2) = 3/4 ln 3 - ln 2   (~0.1308)
    #   KL(de || ce) = 1/2 ln(2/3) + 1/2 ln 2   = ln 2 - 1/2 ln 3   (~0.1438): the other direction differs
    row1 = 0.75 * LN3 - LN2
    assert listwise_kl(t([[0, 0]]), t([[LN3, 0]])).item() == pytest.approx(row1)
    assert listwise_kl(t([[0, 0]]), t([[LN3, 0]])).item() != pytest.approx(LN2 - 0.5 * LN3)
    # row 2: cross (0, 0) -> (1/2, 1/2); dual (0, ln 3) -> (1/4, 3/4)
    #   KL(ce || de) = 1/2 ln(2) + 1/2 ln(2/3) = ln 2 - 1/2 ln 3
    # the 2x2 batch averages the rows: (3/4 ln 3 - ln 2 + ln 2 - 1/2 ln 3) / 2 = ln 3 / 8
    dual, cross = t([[0, 0], [0, LN3]]), t([[LN3, 0], [0, 0]])
    assert listwise_kl(dual, cross).item() == pytest.approx(LN3 / 8)


def test_listwise_kl_mask_leaves_padding_out():
    # row 1 of the test above with a third, padded candidate: same value, and no nan from -inf - -inf
    mask = torch.tensor([[True, True, False]])
    loss = listwise_kl(t([[0, 0, -5]]), t([[LN3, 0, 99]]), mask)
    assert loss.item() == pytest.approx(0.75 * LN3 - LN2)


def test_listwise_kl_gradient_flows_into_both_models():
    dual = t([[0, 0]]).requires_grad_()
    cross = t([[LN3, 0]]).requires_grad_()
    listwise_kl(dual, cross).backward()
    # dKL/d dual = s~_de - s~_ce = (1/2 - 3/4, 1/2 - 1/4): the dual encoder is pulled towards the cross-encoder
    assert dual.grad[0].tolist() == pytest.approx([-0.25, 0.25])
    # dKL/d cross_j = s~_ce_j * (log s~_ce_j - log s~_de_j - KL), KL = 3/4 ln 3 - ln 2
    kl = 0.75 * LN3 - LN2
    assert cross.grad[0].tolist() == pytest.approx([0.75 * (math.log(1.5) - kl), 0.25 * (math.log(0.5) - kl)])


def test_listwise_kl_shape_errors():
    with pytest.raises(ValueError, match=r"dual \(1, 2\) and cross \(1, 3\)"):
        listwise_kl(t([[0, 0]]), t([[0, 0, 0]]))
    with pytest.raises(ValueError, match="two equal"):
        listwise_kl(t([0, 0]), t([0, 0]))
