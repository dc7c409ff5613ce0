"""streamv1: agents' transcripts and live streams → the locked stream_v1 JSONL catalog."""
