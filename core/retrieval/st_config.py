"""A model folder's own sentence-transformers files: the pooling, prefixes and length its authors chose.

A folder saved by sentence-transformers carries, beside the Hugging Face
weights, the pipeline its authors run (sentence-transformers 6.2's formats,
older spellings included):

* ``modules.json``: the modules in order, each ``{"idx", "name", "path",
  "type"}``: a ``Transformer`` (``path`` ``""`` or a subfolder holding the
  Hugging Face model), a ``Pooling`` (usually at ``1_Pooling``), optionally a
  ``Normalize``.  Any other module (``Dense``, ``LayerNorm``, a ``Router``, a
  folder's own code) changes the vectors in a way this reader does not
  reproduce, so it is refused.
* ``<pooling path>/config.json``: ``pooling_mode`` (``"mean"``, ``"cls"``,
  ``"max"``, ``"lasttoken"``; a list would concatenate several and is
  refused), or the older booleans ``pooling_mode_cls_token``,
  ``pooling_mode_mean_tokens``, ``pooling_mode_max_tokens``,
  ``pooling_mode_lasttoken`` (none set means mean, as sentence-transformers
  reads it); ``include_prompt``.
* ``config_sentence_transformers.json``: ``prompts`` (name -> text prepended
  to the input), ``default_prompt_name``, ``similarity_fn_name``,
  ``model_type``.
* ``<transformer path>/sentence_bert_config.json`` (or an older
  ``sentence_<arch>_config.json``): ``max_seq_length``, ``do_lower_case``.
  Folders written by sentence-transformers 5+ keep the length in the
  tokenizer's ``model_max_length`` (``tokenizer_config.json``) instead.

How they map onto :class:`~core.retrieval.encoder.BiEncoder`'s options:

* query prefix: the ``query`` prompt; passage prefix: the first non-empty of
  the ``document``, ``passage`` and ``corpus`` prompts (the names
  ``encode_query`` / ``encode_document`` look up; an empty ``document``
  prompt, which sentence-transformers writes by default, does not hide a
  ``passage`` one).  A kind with no prompt of its own gets the
  ``default_prompt_name`` prompt, as a plain ``encode`` call would.
* normalisation: a ``Normalize`` module, or a cosine similarity
  (``similarity_fn_name`` ``"cosine"``, sentence-transformers' default)
  since pooljudge ranks by inner product and cosine is the inner product of
  normalised vectors; ``"dot"`` without ``Normalize`` keeps the raw vectors.
* maximum length: ``max_seq_length`` (or a ``model_max_length`` in the
  module's tokenizer arguments), else, in a folder with ``modules.json``,
  the tokenizer's ``model_max_length``, else the model's position limit.

A folder without these files keeps pooljudge's defaults (mean pooling, no
prefixes, normalised vectors, 256 tokens).  Errors name the file and what is
wrong with it.

Pooling (:func:`pool_hidden`), with ``h_t`` the last hidden states and
``m_t`` the attention mask::

    mean:      sum_t m_t h_t / max(sum_t m_t, 1e-9)
    cls:       h_f   with f the first t where m_t = 1
    max:       max over {t : m_t = 1} of h_t, per dimension
    lasttoken: h_l   with l the last t where m_t = 1
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from core.validators import is_integer

__all__ = [
    "POOLING_MODES",
    "Conventions",
    "EncoderSettings",
    "pool_hidden",
    "read_conventions",
]

POOLING_MODES = ("mean", "cls", "max", "lasttoken")
"""The pooling modes pooljudge computes (sentence-transformers' names)."""

DEFAULT_MAX_LENGTH = 256
"""Tokens per text when a folder states no length and carries no ``modules.json``."""

_LEGACY_POOLING_KEYS = {  # sentence-transformers' older boolean keys, in its order
    "pooling_mode_cls_token": "cls",
    "pooling_mode_max_tokens": "max",
    "pooling_mode_mean_tokens": "mean",
    "pooling_mode_mean_sqrt_len_tokens": "mean_sqrt_len_tokens",
    "pooling_mode_weightedmean_tokens": "weightedmean",
    "pooling_mode_lasttoken": "lasttoken",
}
_SBERT_CONFIGS = (  # the Transformer module's config file, newest name first (sentence-transformers' list)
    "sentence_bert_config.json",
    "sentence_roberta_config.json",
    "sentence_distilbert_config.json",
    "sentence_camembert_config.json",
    "sentence_albert_config.json",
    "sentence_xlm-roberta_config.json",
    "sentence_xlnet_config.json",
)
_QUERY_PROMPTS = ("query",)
_PASSAGE_PROMPTS = ("document", "passage", "corpus")  # encode_document's order
_HARMLESS_MODULES = ("Dropout",)  # no effect at inference
_NOT_EMBEDDERS = {"CrossEncoder": "rerank:model=", "SparseEncoder": None, "MultiVectorEncoder": None}
_HUGE_LENGTH = 1_000_000  # tokenizers without a limit report ~1e30


@dataclass(frozen=True)
class EncoderSettings:
    """The options a bi-encoder runs with: explicit ones, else the folder's, else pooljudge's defaults.

    ``max_length`` is ``None`` when only the model's position limit bounds it.
    """

    pooling: str
    normalize: bool
    max_length: int | None
    query_prefix: str
    passage_prefix: str
    lowercase: bool


@dataclass(frozen=True)
class Conventions:
    """What a model folder's sentence-transformers files say (``None``: the files say nothing).

    Attributes
    ----------
    folder : Path
        The folder as given.
    model_dir : Path
        Where the Hugging Face model lives: the ``Transformer`` module's path
        (the folder itself unless ``modules.json`` names a subfolder).
    pooling : str or None
        One of :data:`POOLING_MODES`.
    normalize : bool or None
    max_length : int or None
    query_prefix, passage_prefix : str or None
    lowercase : bool
        ``do_lower_case``: lower-case the text (prompt included) before tokenising.
    include_prompt : bool
        False: the prompt's tokens are left out of the pooling (refused with a
        non-empty prefix by :meth:`settings`).
    from_modules : bool
        The folder has ``modules.json`` (its limit is then the tokenizer's, not 256).
    files : tuple of str
        The files read, relative to ``folder``: what decided the conventions.
    """

    folder: Path
    model_dir: Path
    pooling: str | None = None
    normalize: bool | None = None
    max_length: int | None = None
    query_prefix: str | None = None
    passage_prefix: str | None = None
    lowercase: bool = False
    include_prompt: bool = True
    from_modules: bool = False
    files: tuple[str, ...] = field(default=())

    def settings(
        self,
        *,
        pooling: str | None = None,
        normalize: bool | None = None,
        max_length: int | None = None,
        query_prefix: str | None = None,
        passage_prefix: str | None = None,
    ) -> EncoderSettings:
        """The options to encode with: each explicit one (not ``None``) wins over the folder's.

        Raises
        ------
        ValueError
            When the folder's pooling leaves the prompt out (``include_prompt``
            false) and a prefix is in use: pooljudge pools the prompt's tokens too.
        """
        chosen = EncoderSettings(
            pooling=_first(pooling, self.pooling, "mean"),
            normalize=_first(normalize, self.normalize, True),
            max_length=_first(max_length, self.max_length, None if self.from_modules else DEFAULT_MAX_LENGTH),
            query_prefix=_first(query_prefix, self.query_prefix, ""),
            passage_prefix=_first(passage_prefix, self.passage_prefix, ""),
            lowercase=self.lowercase,
        )
        if not self.include_prompt and (chosen.query_prefix or chosen.passage_prefix):
            pooling_file = self.folder / self.files[1]  # only a Pooling config, read right after modules.json, says so
            raise ValueError(
                f"{pooling_file}: include_prompt=false (the prompt's tokens are left out of the pooling), which "
                "pooljudge does not do; with a query or passage prefix the vectors would differ from the model's"
            )
        return chosen


def _first(*values: Any) -> Any:
    """The first value that is not ``None`` (the last one is the default)."""
    return next((v for v in values if v is not None), values[-1])


# --------------------------------------------------------------------------- reading


def _read_json(path: Path) -> Any:
    """A JSON file's content; ``ValueError`` naming the file, line and column when it is not JSON."""
    if not path.is_file():
        raise ValueError(f"{path}: no such file")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}:{exc.lineno}:{exc.colno}: not valid JSON ({exc.msg})") from None


def _read_object(path: Path) -> dict[str, Any]:
    data = _read_json(path)
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object, got {type(data).__name__}")
    return data


def _typed(path: Path, data: dict[str, Any], key: str, types: tuple[type, ...], what: str) -> Any:
    """``data[key]`` (``None`` when absent or null), refused unless one of ``types`` (a bool is no int)."""
    value = data.get(key)
    if value is None:
        return None
    if not (is_integer(value) if types == (int,) else isinstance(value, types)):
        raise ValueError(f"{path}: {key!r} must be {what}, got {value!r}")
    return value


def _relative_dir(folder: Path, modules_file: Path, path: Any, name: str) -> Path:
    """A module's ``path`` as a folder inside ``folder``; refused when absolute or escaping (existence is checked
    where files are read: a ``Normalize`` module's folder holds nothing and may be absent)."""
    if not isinstance(path, str):
        raise ValueError(f"{modules_file}: module {name!r} has no 'path' string, got {path!r}")
    if Path(path).is_absolute() or ".." in Path(path).parts:
        raise ValueError(f"{modules_file}: module {name!r} has path {path!r}, which leaves the model folder")
    return folder / path


def _modules(folder: Path) -> list[tuple[str, Path]]:
    """``modules.json`` as ``(class name, folder)`` pairs, checked: its own code and unknown kinds refused."""
    modules_file = folder / "modules.json"
    data = _read_json(modules_file)
    if not isinstance(data, list) or not data:
        raise ValueError(f"{modules_file}: expected a non-empty JSON list of modules, got {data!r:.80}")
    out = []
    for i, entry in enumerate(data):
        if not isinstance(entry, dict) or not isinstance(entry.get("type"), str):
            raise ValueError(f"{modules_file}: module {i} must be an object with a 'type' string, got {entry!r:.80}")
        kind = entry["type"]
        if not kind.startswith("sentence_transformers."):
            raise ValueError(
                f"{modules_file}: module {i} is {kind!r}, code of the model's own; pooljudge never runs a folder's code"
            )
        out.append((kind.rsplit(".", 1)[-1], _relative_dir(folder, modules_file, entry.get("path"), str(i))))
    return out


def _pipeline(folder: Path) -> tuple[Path, Path | None, bool]:
    """The Transformer's folder, the Pooling's folder (``None``: no Pooling) and whether a Normalize follows."""
    modules_file = folder / "modules.json"
    modules = _modules(folder)
    names = [name for name, _ in modules]
    if names[0] != "Transformer":
        raise ValueError(f"{modules_file}: the first module is {names[0]!r}; pooljudge needs a Transformer first")
    unsupported = [n for n in names[1:] if n not in ("Pooling", "Normalize", *_HARMLESS_MODULES)]
    if unsupported or names.count("Pooling") > 1:
        what = ", ".join(unsupported) if unsupported else "two Pooling modules"
        raise ValueError(
            f"{modules_file}: modules {what} are not supported (pooljudge runs Transformer -> Pooling -> "
            "optional Normalize); the vectors would differ from the model's"
        )
    pooling_dir = next((path for name, path in modules if name == "Pooling"), None)
    return modules[0][1], pooling_dir, "Normalize" in names


def _pooling(config_file: Path) -> tuple[str, bool]:
    """A Pooling module's mode and ``include_prompt`` from its ``config.json`` (either spelling of the mode)."""
    data = _read_object(config_file)
    mode: Any = data.get("pooling_mode")
    if mode is None:
        legacy = [m for key, m in _LEGACY_POOLING_KEYS.items() if data.get(key)]
        mode = legacy or "mean"  # no boolean set: sentence-transformers pools by the mean
    if isinstance(mode, list) and len(mode) == 1:
        mode = mode[0]
    if isinstance(mode, list):
        raise ValueError(
            f"{config_file}: pooling modes {' + '.join(map(str, mode))} would be concatenated into one vector; "
            f"pooljudge supports one of {', '.join(POOLING_MODES)}"
        )
    if mode not in POOLING_MODES:
        raise ValueError(f"{config_file}: pooling mode {mode!r} is not supported (one of {', '.join(POOLING_MODES)})")
    include_prompt = _typed(config_file, data, "include_prompt", (bool,), "true or false")
    return str(mode), include_prompt is not False


def _prefixes(config_file: Path, data: dict[str, Any]) -> tuple[str, str]:
    """Query and passage prefixes from ``prompts`` and ``default_prompt_name``."""
    prompts = data.get("prompts") or {}
    if not isinstance(prompts, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in prompts.items()):
        raise ValueError(f"{config_file}: 'prompts' must map prompt names to strings, got {prompts!r:.120}")
    default_name = _typed(config_file, data, "default_prompt_name", (str,), "a prompt name")
    if default_name is not None and default_name not in prompts:
        raise ValueError(
            f"{config_file}: default_prompt_name {default_name!r} is not one of its prompts ({', '.join(prompts)})"
        )
    default = prompts[default_name] if default_name is not None else ""

    def prefix(names: tuple[str, ...]) -> str:
        return next((prompts[n] for n in names if prompts.get(n)), default)

    return prefix(_QUERY_PROMPTS), prefix(_PASSAGE_PROMPTS)


def _normalize(config_file: Path, data: dict[str, Any], has_normalize: bool) -> bool:
    """Normalise when a Normalize module does, or when the model is compared by cosine (inner product of unit vectors)."""
    similarity = _typed(config_file, data, "similarity_fn_name", (str,), "a similarity name")
    if has_normalize or similarity in (None, "cosine"):
        return True
    if similarity in ("dot", "dot_product"):
        return False
    raise ValueError(
        f"{config_file}: similarity_fn_name {similarity!r} without a Normalize module is not supported: "
        "pooljudge ranks by inner product (cosine with normalised vectors)"
    )


def _model_config(folder: Path, has_normalize: bool) -> tuple[str, str, bool, list[str]]:
    """Prefixes and normalisation from ``config_sentence_transformers.json`` (absent: none and cosine)."""
    config_file = folder / "config_sentence_transformers.json"
    if not config_file.is_file():
        return "", "", True, []
    data = _read_object(config_file)
    model_type = data.get("model_type")
    if model_type in _NOT_EMBEDDERS:
        use = _NOT_EMBEDDERS[model_type]
        raise ValueError(
            f"{config_file}: model_type {model_type!r}: not a sentence embedding model"
            + (f" (use it as a re-ranker: {use}{folder})" if use else "")
        )
    query, passage = _prefixes(config_file, data)
    return query, passage, _normalize(config_file, data, has_normalize), [config_file.name]


def _length_settings(model_dir: Path, from_modules: bool) -> tuple[int | None, bool, list[str]]:
    """``max_seq_length`` and ``do_lower_case`` of the Transformer module (else the tokenizer's limit)."""
    config_file = next((model_dir / n for n in _SBERT_CONFIGS if (model_dir / n).is_file()), None)
    data = _read_object(config_file) if config_file is not None else {}
    where = config_file if config_file is not None else model_dir / _SBERT_CONFIGS[0]
    length = _typed(where, data, "max_seq_length", (int,), "a positive integer")
    for key in ("processor_kwargs", "tokenizer_args"):  # a tokenizer limit set there wins, as in sentence-transformers
        kwargs = data.get(key)
        if isinstance(kwargs, dict) and kwargs.get("model_max_length") is not None:
            length = _typed(where, kwargs, "model_max_length", (int,), "a positive integer")
    if length is not None and length < 1:
        raise ValueError(f"{where}: the maximum length must be a positive integer, got {length!r}")
    lowercase = _typed(where, data, "do_lower_case", (bool,), "true or false") is True
    files = [config_file.name] if config_file is not None else []
    tokenizer_file = model_dir / "tokenizer_config.json"
    if length is None and from_modules and tokenizer_file.is_file():
        limit = _read_object(tokenizer_file).get("model_max_length")
        if is_integer(limit) and 0 < int(cast(int, limit)) < _HUGE_LENGTH:
            length = int(cast(int, limit))
    return length, lowercase, files


def read_conventions(folder: str | Path) -> Conventions:
    """Read a model folder's sentence-transformers files (see the module docstring).

    Parameters
    ----------
    folder : str or Path
        A local model folder.  A folder without ``modules.json``,
        ``config_sentence_transformers.json`` and ``sentence_bert_config.json``
        gives empty conventions (pooljudge's defaults apply).

    Returns
    -------
    Conventions

    Raises
    ------
    ValueError
        A file is not JSON or not shaped as sentence-transformers writes it,
        or asks for something pooljudge does not reproduce (a ``Dense`` module,
        concatenated pooling modes, a model's own code, a cross-encoder...);
        the message names the file.
    """
    folder = Path(folder)
    model_dir, pooling_dir, has_normalize = folder, None, False
    from_modules = (folder / "modules.json").is_file()
    files: list[str] = []
    if from_modules:
        model_dir, pooling_dir, has_normalize = _pipeline(folder)
        files.append("modules.json")
    query, passage, normalize, config_files = _model_config(folder, has_normalize)  # first: it names a cross-encoder
    if from_modules and pooling_dir is None:
        raise ValueError(
            f"{folder / 'modules.json'}: no Pooling module, so the model gives token vectors, not one vector "
            "per text (a cross-encoder or a multi-vector model?)"
        )
    pooling, include_prompt = "mean", True  # no Pooling module named: sentence-transformers' default
    if pooling_dir is not None:
        pooling, include_prompt = _pooling(pooling_dir / "config.json")
        files.append(str((pooling_dir / "config.json").relative_to(folder)))
    length, lowercase, length_files = _length_settings(model_dir, from_modules)
    files += config_files + [str((model_dir / f).relative_to(folder)) for f in length_files]
    if not files:
        return Conventions(folder=folder, model_dir=folder)
    return Conventions(
        folder=folder,
        model_dir=model_dir,
        pooling=pooling,
        normalize=normalize,
        max_length=length,
        query_prefix=query,
        passage_prefix=passage,
        lowercase=lowercase,
        include_prompt=include_prompt,
        from_modules=from_modules,
        files=tuple(files),
    )


# --------------------------------------------------------------------------- pooling


def pool_hidden(hidden: Any, mask: Any, mode: str) -> Any:
    """Pool last hidden states ``(batch, tokens, dim)`` over the attention mask ``(batch, tokens)``.

    Parameters
    ----------
    hidden : torch.Tensor
        Any float dtype; pooled in float32.
    mask : torch.Tensor
        1 for a real token, 0 for padding (either side).
    mode : {"mean", "cls", "max", "lasttoken"}
        See the module docstring for the formulas (sentence-transformers' ``Pooling``).

    Returns
    -------
    torch.Tensor
        ``(batch, dim)`` float32, not normalised.
    """
    import torch

    if mode not in POOLING_MODES:
        raise ValueError(f"pooling mode must be one of {POOLING_MODES}, got {mode!r}")
    hidden = hidden.float()
    if mode == "mean":
        m = mask.unsqueeze(-1).to(hidden.dtype)
        return (hidden * m).sum(dim=1) / m.sum(dim=1).clamp(min=1e-9)
    if mode == "max":
        return hidden.masked_fill(mask.unsqueeze(-1) == 0, float("-inf")).max(dim=1).values
    positions = torch.arange(mask.shape[1], device=mask.device)
    # argmax returns the first maximum: the first real token, or (positions weighted) the last one
    index = mask.argmax(dim=1) if mode == "cls" else (mask.to(positions.dtype) * positions).argmax(dim=1)
    return hidden[torch.arange(hidden.shape[0], device=hidden.device), index]
