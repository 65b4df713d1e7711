"""Code shared by the pages: setup and layout, figures, tables and downloads.

Imports go one way: attncore <- pages.ui <- the pages and dashboard.py.
"""
