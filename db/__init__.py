"""The pooljudge store: SQLAlchemy models, engine, migrations, and the functions that read and write it.

Never imports streamlit.  Functions take a ``Session`` first; callers own the
transaction.
"""
