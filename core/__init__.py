"""pooljudge core: pure library code (formats, metrics, statistics).

Nothing in this package imports streamlit or sqlalchemy; everything takes and
returns plain Python data so it can be used from a notebook.
"""
