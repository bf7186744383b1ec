"""sentence-transformers' files written by hand into a model folder, as hub folders carry them.

:func:`write_st_files` writes ``modules.json``, the Pooling module's ``config.json``,
``config_sentence_transformers.json`` and ``sentence_bert_config.json`` in the older spelling
most hub folders use (``pooling_mode_mean_tokens``... booleans, ``sentence_transformers.models.*``
types), so tests can check them against what sentence-transformers itself reads.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

LEGACY_POOLING_KEYS = {
    "cls": "pooling_mode_cls_token",
    "mean": "pooling_mode_mean_tokens",
    "max": "pooling_mode_max_tokens",
    "lasttoken": "pooling_mode_lasttoken",
}


def write_json(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path


def write_st_files(
    folder: Path,
    *,
    pooling: str = "mean",
    normalize: bool = True,
    prompts: dict[str, str] | None = None,
    default_prompt_name: str | None = None,
    similarity: str | None = None,
    max_seq_length: int | None = None,
    do_lower_case: bool = False,
    transformer_path: str = "",
    dim: int = 32,
) -> Path:
    """sentence-transformers' files for the Hugging Face model at ``folder/transformer_path``.

    ``similarity=None`` leaves ``similarity_fn_name`` out (sentence-transformers then means cosine).
    """
    modules = [
        {"idx": 0, "name": "0", "path": transformer_path, "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
    ]
    if normalize:
        modules.append({"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"})
    write_json(folder / "modules.json", modules)
    write_json(
        folder / "1_Pooling" / "config.json",
        {"word_embedding_dimension": dim, **{key: mode == pooling for mode, key in LEGACY_POOLING_KEYS.items()}},
    )
    config: dict[str, Any] = {"__version__": {"sentence_transformers": "2.7.0"}, "prompts": prompts or {}}
    config["default_prompt_name"] = default_prompt_name
    if similarity is not None:
        config["similarity_fn_name"] = similarity
    write_json(folder / "config_sentence_transformers.json", config)
    write_json(
        folder / transformer_path / "sentence_bert_config.json",
        {"max_seq_length": max_seq_length, "do_lower_case": do_lower_case},
    )
    return folder
