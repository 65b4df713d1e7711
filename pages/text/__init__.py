"""The sentences of each lesson that depend on its numbers, one module per lesson.

Plain functions of the results a page shows (no Streamlit), so that a test can call them
with any result, as a page would.
"""
