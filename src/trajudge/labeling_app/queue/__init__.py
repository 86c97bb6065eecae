"""Which item (or pair) an annotator labels next: the queue orders (random, stratified,
disagreement, escalated, active), who shares which item, the progress through it, and the pair
queue of pairwise rubrics. Public names are exported by :mod:`trajudge.labeling_app`."""
