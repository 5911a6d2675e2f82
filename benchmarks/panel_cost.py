"""What a check's alternatives cost per model, and what a panel's cost, from the recorded corpus:
the prompt ``coherence`` would send for each HumanEval task (``build_messages``), the recorded
replies as the completions, priced with litellm's local price map.  One request per sample
(providers that honour ``n`` charge the prompt once per request: less than this).

    python benchmarks/panel_cost.py ../shared/corpus [--samples 10]
"""

from __future__ import annotations

import argparse
import os
import statistics
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from coherence.engine.markers import target_for
from coherence.engine.sampling import build_messages, extract_program
from coherence.engine.sampling.panel import split_counts
from coherence.eval.corpus import load_samples

# corpus name -> a litellm model with a price (the same model, as sold by one provider)
PRICED = {
    "claude_sonnet_4": "claude-sonnet-4-5",  # Sonnet 4 is not in this price map; 4.5 is priced alike
    "gpt_4o": "gpt-4o",
    "gemini_2_5_pro": "gemini/gemini-2.5-pro",
    "deepseek_v3_0324": "deepseek/deepseek-chat",
    "gpt_3_5": "gpt-3.5-turbo",
    "llama_3_1_8b_instruct": "deepinfra/meta-llama/Meta-Llama-3.1-8B-Instruct",
    "ministral_8b": "mistral/ministral-8b-latest",
    "llama_4_maverick_17b": "deepinfra/meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8",
}


def per_sample(corpus: Path, model: str, litellm) -> tuple[float, int, int]:
    """Mean USD, prompt tokens and completion tokens of one alternative of ``model``."""
    price = litellm.model_cost[PRICED[model]]
    usd, pts, cts = [], [], []
    for task in load_samples(corpus / f"humaneval-{model}.jsonl.gz"):
        first = extract_program(task.candidates[0], task.entry_point)
        if not first.ok:
            continue
        try:
            spec = target_for(first.code, task.entry_point, "task.py", docstring=task.description).spec
        except (SyntaxError, LookupError):
            continue
        pt = litellm.token_counter(model="gpt-4o", messages=build_messages(spec))
        for reply in task.candidates[1:10]:
            ct = litellm.token_counter(model="gpt-4o", text=reply)
            usd.append(pt * price["input_cost_per_token"] + ct * price["output_cost_per_token"])
            pts.append(pt)
            cts.append(ct)
    return statistics.mean(usd), round(statistics.mean(pts)), round(statistics.mean(cts))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--samples", type=int, default=10)
    args = ap.parse_args()
    import litellm

    alts = args.samples - 1
    each = {m: per_sample(args.corpus, m, litellm) for m in PRICED}
    print(f"| model (priced as) | prompt tokens | completion tokens | USD per check ({alts} alternatives) |")
    print("|---|---|---|---|")
    for m, (usd, pt, ct) in each.items():
        print(f"| {m} ({PRICED[m]}) | {pt} | {ct} | {usd * alts:.4f} |")
    strong = ["claude_sonnet_4", "gemini_2_5_pro", "deepseek_v3_0324"]
    for name, members in (("3 strongest", strong), ("claude + gpt_4o", ["claude_sonnet_4", "gpt_4o"])):
        counts = split_counts(alts, [1.0] * len(members))
        total = sum(k * each[m][0] for m, k in zip(members, counts))
        parts = ", ".join(f"{m} {k} × ${each[m][0]:.5f}" for m, k in zip(members, counts))
        print(f"\npanel {name}: ${total:.4f} per check ({parts})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
