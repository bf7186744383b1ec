"""``pooljudge lexicon``: a collection's own names for the entity-mismatch detector.

::

    pooljudge lexicon add -c COLLECTION NAME KIND
    pooljudge lexicon list -c COLLECTION          # name<TAB>kind lines
    pooljudge lexicon remove -c COLLECTION NAME
    pooljudge lexicon import -c COLLECTION FILE   # name<TAB>kind lines, # comments

The names are stored per collection (:mod:`db.lexicon`); the Error analysis
page's suggestions read them.  An import is one transaction: a bad line
(named ``file:line``) leaves the lexicon as it was.
"""

from __future__ import annotations

import argparse

from pooljudge.cli.common import open_store


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``lexicon`` command to ``pooljudge``'s subcommands."""
    p = sub.add_parser("lexicon", help="a collection's own names and kinds for the entity-mismatch detector")
    actions = p.add_subparsers(dest="action", required=True)
    for action, text in (
        ("add", "add a name of a kind (liquor, phone, site...)"),
        ("list", "list the names, one name<TAB>kind a line"),
        ("remove", "remove a name"),
        ("import", "add the names of a name<TAB>kind file (a name already there takes the file's kind)"),
    ):
        a = actions.add_parser(action, help=text)
        a.add_argument("--collection", "-c", required=True)
        if action in ("add", "remove"):
            a.add_argument("name")
        if action == "add":
            a.add_argument("kind")
        if action == "import":
            a.add_argument("file", help="UTF-8 text, one name<TAB>kind a line")
        a.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``pooljudge lexicon ACTION``; errors (``ValueError``, ``LookupError``) are ``main``'s to print."""
    # imported here: the detectors (jieba, cn2an) would slow every other command's start
    from core.detectors import load_lexicon
    from db.lexicon import add_lexicon_name, import_lexicon, list_lexicon, remove_lexicon_name

    if args.action == "list":
        with open_store(args).read() as session:
            for entry in list_lexicon(session, args.collection):
                print(f"{entry.name}\t{entry.kind}")
        return 0
    names = load_lexicon(args.file) if args.action == "import" else {}  # read before the store opens
    with open_store(args).write() as session:
        if args.action == "add":
            add_lexicon_name(session, args.collection, args.name, args.kind)
            print(f"added {args.name!r} ({args.kind}) to the lexicon of {args.collection!r}")
        elif args.action == "remove":
            remove_lexicon_name(session, args.collection, args.name)
            print(f"removed {args.name!r} from the lexicon of {args.collection!r}")
        else:
            added, changed = import_lexicon(session, args.collection, names)
            print(f"lexicon of {args.collection!r}: {added} names added, {changed} kinds changed")
    return 0
