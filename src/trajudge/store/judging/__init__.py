"""What a judge run writes: judgment rows in small batched transactions (_judgments), the lease
that lets one run at a time judge a dataset (_leases), batches submitted to a provider's batch
API (_batches). Public names are exported by :mod:`trajudge.store`."""
