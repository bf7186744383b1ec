"""The `user` command: accounts."""

from __future__ import annotations

import argparse
import os

from db.vocab import Role
from pooljudge.cli.common import open_store


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `user` command: accounts."""
    p = sub.add_parser(
        "user", help="accounts: add, list, disable, enable, passwd, role (the last three sign the account out)"
    )
    p.add_argument("action", choices=["add", "list", "disable", "enable", "passwd", "role"])
    p.add_argument("username", nargs="?")
    p.add_argument(
        "--role",
        choices=list(Role),
        help="the role of a new account (default annotator), or the new role for `user role`",
    )
    p.set_defaults(func=run)


def _password() -> str:
    """The new password: $POOLJUDGE_PASSWORD (for scripts), else asked twice on the terminal."""
    import getpass

    password = os.environ.get("POOLJUDGE_PASSWORD")
    if password:
        return password
    first = getpass.getpass("password: ")
    if getpass.getpass("again: ") != first:
        raise ValueError("the passwords differ")
    return first


def run(args: argparse.Namespace) -> int:
    from core.names import display_name
    from db.users import add_user, list_users, set_active, set_password, set_role

    store = open_store(args)
    if args.action == "list":
        with store.read() as session:
            for account in list_users(session):
                # names stored before they were checked may hold newlines or escape codes
                print(f"{display_name(account.username)}\t{account.role}\t{'active' if account.active else 'disabled'}")
        return 0
    if not args.username:
        raise ValueError(f"user {args.action} needs a username")
    if args.action == "add":  # a bad name is refused before the password is asked for, twice
        from core.names import USERNAME_MAX_CHARS, check_name

        check_name(args.username, "username", limit=USERNAME_MAX_CHARS)
    with store.write() as session:
        if args.action == "add":
            role = args.role or Role.ANNOTATOR
            added = add_user(session, args.username, _password(), role)
            print(f"added {role} {added.username!r}")  # the stored (NFKC) name, the one to sign in with
        elif args.action == "passwd":
            set_password(session, args.username, _password())
            print(f"password of {args.username!r} changed; its sessions are signed out")
        elif args.action == "role":
            if not args.role:  # no default here: a forgotten --role must not demote anyone
                raise ValueError("user role needs --role")
            set_role(session, args.username, args.role)
            print(f"{args.username!r} is now {args.role}; its sessions are signed out")
        else:
            set_active(session, args.username, args.action == "enable")
            print(
                f"{args.action}d {args.username!r}"
                + ("; its sessions are signed out" if args.action == "disable" else "")
            )
    return 0
