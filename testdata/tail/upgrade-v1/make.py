"""Make the old-release (pickle-era, checkpoint v1) upgrade fixture."""
import shutil, json, sys
from pathlib import Path
sys.path.insert(0, "/work/main/tests")
from translator.tail.daemon import OutputSink, TailDaemon
ROOT = Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/streamv1-upgrade-fixture")
shutil.rmtree(ROOT, ignore_errors=True)
T = Path("/work/main/testdata/claude-session")
LAYOUT = T / "subagent_layout"
SID = "7ab05073-03bd-480e-bfab-7ae89322bf51"
proj = ROOT / "projects" / "p"
(proj / SID / "subagents").mkdir(parents=True)
full = ROOT / "full"; (full / SID / "subagents").mkdir(parents=True)
# main session with a subagent: main file cut mid-turn, agent file cut mid-run
main_src = (LAYOUT / f"{SID}.jsonl").read_bytes()
agent_src = (LAYOUT / SID / "subagents" / "agent-a4ecf0489c6080106.jsonl").read_bytes()
meta = LAYOUT / SID / "subagents" / "agent-a4ecf0489c6080106.meta.json"
bash = (T / "print_mode_bash.jsonl").read_bytes()
def cut(b, frac, extra):
    i = int(len(b) * frac); i = b.index(b"\n", i) + 1
    return i + extra  # extra bytes: a partial line after the last whole one
cuts = {
    f"p/{SID}.jsonl": (main_src, cut(main_src, 0.4, 0)),
    f"p/{SID}/subagents/agent-a4ecf0489c6080106.jsonl": (agent_src, cut(agent_src, 0.5, 37)),
    "p/5eccd76e-a2bd-46d3-9ac7-285807858239.jsonl": (bash, cut(bash, 0.55, 11)),
}
for rel, (src, n) in cuts.items():
    (ROOT / "projects" / rel).write_bytes(src[:n])
    (full / rel).parent.mkdir(parents=True, exist_ok=True)
    (full / rel).write_bytes(src)
shutil.copy(meta, proj / SID / "subagents" / meta.name)
shutil.copy(meta, full / "p" / SID / "subagents" / meta.name)
d = TailDaemon([ROOT / "projects"], OutputSink(ROOT / "out.jsonl"), ROOT / "state.json",
               clock=lambda: "2026-01-01T00:00:00.000Z", now=lambda: 1000.0, commit_every=0, idle_close=0)
d.start(); d.tick(rescan=True); d.stop()
print(json.dumps({k: v for k, v in json.loads((ROOT/"state.json").read_text()).items() if k != "files"}))
for p, m in json.loads((ROOT/"state.json").read_text())["files"].items(): print(p, m["offset"], m["ino"], len(m["state"]))
