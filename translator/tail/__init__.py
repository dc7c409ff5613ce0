"""The live tail daemon: ~/.claude/projects into one stream_v1 stream."""
