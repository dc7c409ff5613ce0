"""The live tail daemon: agents' session folders into one stream_v1 stream."""
