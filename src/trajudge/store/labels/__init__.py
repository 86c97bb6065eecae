"""Label rows, single and pair: each save in its own transaction with its history (_labels,
_pair_labels, over what they share in _label_tables), and labels to and from CSV, JSONL and
Parquet files (_label_files, _pair_label_files). Public names are exported by
:mod:`trajudge.store`."""
