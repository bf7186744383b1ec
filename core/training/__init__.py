"""Learning from the labels: losses, cross-encoder re-rankers, dual encoders and RocketQAv2.

Everything here is pure (torch and transformers, no store): :mod:`core.training.data`
holds the shapes the trainers take (:class:`~core.training.data.LabelledData`,
:class:`~core.training.data.TrainConfig`, :class:`~core.training.data.TrainResult`),
:mod:`core.training.losses` the losses as the papers write them.
"""
