"""Reading ciq-ptxas trace records (CIQ_TRACE) in the benchmark scripts:
did ciq-ptxas apply the control set it was given? When ptxas refuses a
set, ciq-ptxas builds the default instead (it never breaks a build), so a
ground-truth variant must be checked, or default code would be measured
under the set's name."""
import json
import os

FORMAT = "ciq-trace/1"  # what wrapper/trace.cpp writes and tuner/objectives/objectives.cpp reads


def not_applied(trace_dir):
    """None when `trace_dir` holds no record (nothing was compiled); '' when
    every record says the controls were applied; else ptxas' reason."""
    names = sorted(os.listdir(trace_dir)) if os.path.isdir(trace_dir) else []
    if not names:
        return None
    for name in names:
        if not name.endswith(".json"):
            continue
        with open(os.path.join(trace_dir, name)) as f:
            record = json.load(f)
        if record.get("format") != FORMAT:
            raise ValueError(f"{name}: not a {FORMAT} trace record")
        if not record.get("controls_applied"):
            return record.get("controls_error") or "controls not applied"
    return ""
