"""Streamlit glue shared by the pages: cached store, escaping, small renderers.

Only pages and ``app.py`` import this package.
"""
