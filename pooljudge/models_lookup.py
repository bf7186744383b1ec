"""A model as written (a model registered in a collection, or a folder) as its folder.

A leaf: the CLI, the pooling and training jobs and the retriever kinds all read models by name,
so this module imports from ``db`` only, never another ``pooljudge`` module.
"""

from __future__ import annotations

from pathlib import Path

from db.engine import Store
from db.queries import NotFound
from db.trained_models import get_model


def registered_model_folder(store: Store, collection: str, name_or_path: str, *, role: str | None = None) -> Path:
    """The folder of a model given by its registered name in ``collection``, or by a folder path.

    Parameters
    ----------
    store : Store
        The store the collection's models are registered in.
    collection : str
        The collection's name.
    name_or_path : str
        A model registered in the collection (:func:`db.trained_models.get_model`), else an
        existing folder.
    role : {"cross-encoder", "dual-encoder"}, optional
        What the caller loads: a RocketQAv2 model holds both, its dual encoder in its folder and
        its co-trained cross-encoder in ``cross-encoder/`` inside it; ``role="cross-encoder"``
        gives that one.  Other kinds ignore ``role``.

    Returns
    -------
    Path
        The model's folder.

    Raises
    ------
    NotFound
        Neither a registered model nor a folder (the message names both and the known models).
    """
    with store.read() as session:
        try:
            info = get_model(session, collection, name_or_path)
        except NotFound as exc:
            missing = str(exc.args[0])
            info = None
    if info is not None:
        path = Path(info.path)
        if role == "cross-encoder" and info.kind == "rocketqav2":
            path = path / "cross-encoder"
        if not path.is_dir():
            raise NotFound(
                f"model {name_or_path!r} of collection {collection!r} is registered at {str(path)!r}, "
                "which is no longer a folder"
            )
        return path
    path = Path(name_or_path).expanduser()
    if path.is_dir():
        return path.resolve()
    raise NotFound(f"{missing}, and {name_or_path!r} is not a folder")


def reranker_folder(store: Store | None, collection: str | None, model: str) -> Path:
    """A re-ranker given as written (a folder, or a model registered in ``collection``) as a folder.

    Parameters
    ----------
    store, collection : Store and str, or None
        With both, :func:`registered_model_folder` decides (a registered model's folder by
        name, else an existing folder; for a RocketQAv2 model its co-trained cross-encoder);
        without them the model must be an existing folder.
    model : str
        The model as a spec or a job writes it.

    Returns
    -------
    Path
        The cross-encoder's folder.

    Raises
    ------
    ValueError, NotFound
        The model is neither a folder nor (with a collection) a registered model; the message names it.
    """
    if store is not None and collection is not None:
        # a RocketQAv2 model's co-trained cross-encoder is the re-ranker (its cross-encoder/ folder)
        return registered_model_folder(store, collection, model, role="cross-encoder")
    folder = Path(model).expanduser()
    if not folder.is_dir():
        raise ValueError(
            f"model {model!r}: no such folder"
            + ("" if collection is None else f", and no model of that name is registered in {collection!r}")
        )
    return folder
