from core.detectors.base import Detector, Evidence

DETECTOR = Detector(
    "alignment", "entity_mismatch", ("query", "passage", "encoder"), ("encoder",), lambda pair: [], Evidence, True
)
