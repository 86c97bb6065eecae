"""The Streamlit pages of the labeling app (label, label pairs, review, export) and what their
clicks do; ``_pages`` assembles the page list the entry file runs."""
