# Privacy audit of the synthetic corpora beyond the leak counts (plainsight.audit: corpora, nearest,
# released, evidence, membership, gate, table): results/tables/privacy_audit and its plots.


rule membership_scores:
    """Token statistics of balanced member (fine-tuning) and held-out segments under the base model and each trained adapter."""
    input:
        codes="results/{dataset}/{setting}/{idset}/codes.parquet",
        docs="results/{dataset}/docs.parquet",
        adapters=audited_adapters,
        model=model_input(config["model"]["name_or_path"]),
    output:
        "results/{dataset}/{setting}/{idset}/audit/membership/seed{seed}_scores.parquet",
    log:
        "results/logs/membership_scores/{dataset}_{setting}_{idset}_{seed}.log",
    benchmark:
        "results/benchmarks/membership_scores/{dataset}_{setting}_{idset}_{seed}.tsv"
    conda:
        "../envs/generation.yaml"
    threads: AUDIT["threads"]
    resources:
        mem_mb=mem_mb("membership_scores"),
        runtime=runtime("membership_scores"),
        gpu=GPUS_PER_JOB,
        gpu_memory_mb=gpu_memory_mb("membership_scores"),
    params:
        methods=AUDITED_TRAINED,
        max_length=config["prefix_tuning"]["max_length"],
        batch_size=AUDIT["batch_size"],
        min_k=AUDIT["min_k"],
        model=lambda wildcards: model_source(MODEL_ID),
        placement=MODEL_PLACEMENT,
    script:
        "../scripts/membership_scores.py"


rule released_text_audit:
    """Every corpus of one run and seed, and the run's positive control: the nearest real training segments of each generation, what the released text alone gives away, and each leak measure against its held-out control (one embedder load, the real segments embedded once)."""
    input:
        corpora=run_corpora(
            "results/{dataset}/{setting}/{idset}/synthetic/{method}/seed{seed}.parquet"
        ),
        metrics=run_corpora(
            "results/{dataset}/{setting}/{idset}/metrics/{method}/seed{seed}.parquet"
        ),
        controls=run_corpora(
            "results/{dataset}/{setting}/{idset}/metrics/{method}/seed{seed}_control.json"
        ),
        codes="results/{dataset}/{setting}/{idset}/codes.parquet",
        docs="results/{dataset}/docs.parquet",
        spans="results/{dataset}/spans.parquet",
        guarantees=audited_guarantees,
    output:
        nearest=expand(
            "results/{{dataset}}/{{setting}}/{{idset}}/audit/{method}/seed{{seed}}_nearest.parquet",
            method=AUDITED_CORPORA,
        ),
        records=expand(
            "results/{{dataset}}/{{setting}}/{{idset}}/audit/{method}/seed{{seed}}_released.json",
            method=AUDITED_CORPORA,
        ),
        distances=expand(
            "results/{{dataset}}/{{setting}}/{{idset}}/audit/{method}/seed{{seed}}_distances.parquet",
            method=AUDITED_CORPORA,
        ),
    log:
        "results/logs/released_text_audit/{dataset}_{setting}_{idset}_{seed}.log",
    benchmark:
        "results/benchmarks/released_text_audit/{dataset}_{setting}_{idset}_{seed}.tsv"
    conda:
        "../envs/mauve.yaml"
    threads: AUDIT["threads"]
    resources:
        gpu=GPUS_PER_JOB,
        gpu_memory_mb=gpu_memory_mb("mauve"),
    params:
        methods=config["methods"],
        guaranteed=AUDITED_GUARANTEED,
        metrics={**config["metrics"], "verbatim_ngram": AUDIT["verbatim_ngram"]},
        verbatim_ngram=AUDIT["verbatim_ngram"],
        bootstrap=AUDIT["bootstrap"],
        gate=config["release"]["gate"],
        delta=config["dpsgd"]["delta"],
        placement=MODEL_PLACEMENT,
        positive_control=True,
    script:
        "../scripts/released_text_audit.py"


if AUDITED_PRIVATE_SELECTION:

    rule released_text_audit_private_selection:
        """The private-selection corpora of one run and seed, audited as rule released_text_audit audits the configured methods' (no positive control)."""
        input:
            corpora=expand(CORPUS, method=AUDITED_PRIVATE_SELECTION, allow_missing=True),
            metrics=expand(
                "results/{dataset}/{setting}/{idset}/metrics/{method}/seed{seed}.parquet",
                method=AUDITED_PRIVATE_SELECTION,
                allow_missing=True,
            ),
            controls=expand(
                "results/{dataset}/{setting}/{idset}/metrics/{method}/seed{seed}_control.json",
                method=AUDITED_PRIVATE_SELECTION,
                allow_missing=True,
            ),
            codes="results/{dataset}/{setting}/{idset}/codes.parquet",
            docs="results/{dataset}/docs.parquet",
            spans="results/{dataset}/spans.parquet",
            guarantees=[
                expand(guarantee_record_pattern(m), method=m, allow_missing=True)[0]
                for m in AUDITED_PRIVATE_SELECTION
            ],
        output:
            nearest=expand(
                f"{SELECTION_AUDIT}_nearest.parquet", method=AUDITED_PRIVATE_SELECTION
            ),
            records=expand(
                f"{SELECTION_AUDIT}_released.json", method=AUDITED_PRIVATE_SELECTION
            ),
            distances=expand(
                f"{SELECTION_AUDIT}_distances.parquet",
                method=AUDITED_PRIVATE_SELECTION,
            ),
        log:
            "results/logs/released_text_audit_private_selection/{dataset}_{setting}_{idset}_{seed}.log",
        benchmark:
            "results/benchmarks/released_text_audit_private_selection/{dataset}_{setting}_{idset}_{seed}.tsv"
        conda:
            "../envs/mauve.yaml"
        threads: AUDIT["threads"]
        resources:
            gpu=GPUS_PER_JOB,
            gpu_memory_mb=gpu_memory_mb("mauve"),
        params:
            methods=AUDITED_PRIVATE_SELECTION,
            guaranteed=AUDITED_PRIVATE_SELECTION,
            metrics={
                **config["metrics"],
                "verbatim_ngram": AUDIT["verbatim_ngram"],
            },
            verbatim_ngram=AUDIT["verbatim_ngram"],
            bootstrap=AUDIT["bootstrap"],
            gate=config["release"]["gate"],
            delta=config["dpsgd"]["delta"],
            placement=MODEL_PLACEMENT,
            positive_control=False,
        script:
            "../scripts/released_text_audit.py"


rule privacy_audit_table:
    """The privacy audit: one row per run and method (and the base model's control row)."""
    input:
        released=[
            f"{AUDIT_RUN}/audit/{{method}}/seed{{seed}}_released.json".format(**run)
            for run in AUDIT_RUNS
        ],
        controls=[
            f"{AUDIT_RUN}/audit/{POSITIVE_CONTROL}/seed{{seed}}_released.json".format(
                **run
            )
            for run in AUDIT_SCORE_RUNS
        ],
        summaries=[
            f"{AUDIT_RUN}/metrics/{{method}}/seed{{seed}}_summary.parquet".format(
                **run
            )
            for run in AUDIT_RUNS
        ],
        scores=[
            f"{AUDIT_RUN}/audit/membership/seed{{seed}}_scores.parquet".format(**run)
            for run in AUDIT_SCORE_RUNS
        ],
        paper=config["tables"]["paper"],
        canaries=(
            ["results/tables/canaries.csv"] if AUDIT["canaries"]["in_verdict"] else []
        ),
    output:
        csv=report(
            "results/tables/privacy_audit.csv",
            caption="../report/privacy_audit.rst",
            category="Tables",
            labels={"table": "privacy_audit", "content": "ours"},
        ),
        markdown="results/tables/privacy_audit.md",
    log:
        "results/logs/privacy_audit_table.log",
    conda:
        "../envs/metrics.yaml"
    params:
        runs=AUDIT_RUNS,
        score_runs=AUDIT_SCORE_RUNS,
        bootstrap=AUDIT["bootstrap"],
        verbatim_ngram=AUDIT["verbatim_ngram"],
        gate=config["release"]["gate"],
    script:
        "../scripts/privacy_audit_table.py"


rule privacy_audit_plots:
    """ROC curves of the membership attacks and the closest-record distances of one audited run."""
    input:
        scores=f"{AUDIT_RUN}/audit/membership/seed{{seed}}_scores.parquet",
        distances=audited_distances,
    output:
        roc=report(
            "results/plots/privacy_audit_roc_{dataset}_{setting}_{idset}_seed{seed}.png",
            caption="../report/privacy_audit_roc.rst",
            category="Privacy audit",
            labels={
                "plot": "membership ROC",
                "run": "{dataset} {setting} {idset} seed {seed}",
            },
        ),
        distances=report(
            "results/plots/privacy_audit_distances_{dataset}_{setting}_{idset}_seed{seed}.png",
            caption="../report/privacy_audit_distances.rst",
            category="Privacy audit",
            labels={
                "plot": "closest record",
                "run": "{dataset} {setting} {idset} seed {seed}",
            },
        ),
    log:
        "results/logs/privacy_audit_plots/{dataset}_{setting}_{idset}_{seed}.log",
    conda:
        "../envs/metrics.yaml"
    params:
        methods=config["methods"],
    script:
        "../scripts/privacy_audit_plots.py"


rule canary_docs:
    """Canaries, each a training sentence and a suffix at the target perplexity under the base model; the members inserted into 1, 4 and 16 training segments of distinct documents."""
    input:
        docs="results/{dataset}/docs.parquet",
        codes="results/{dataset}/{setting}/{idset}/codes.parquet",
        design=CANARIES["file"],
        model=model_input(config["model"]["name_or_path"]),
    output:
        docs=f"{CANARY_RUN}/docs.parquet",
        canaries=f"{CANARY_RUN}/canaries.json",
    log:
        "results/logs/canary_docs/{dataset}_{setting}_{idset}_{seed}.log",
    benchmark:
        "results/benchmarks/canary_docs/{dataset}_{setting}_{idset}_{seed}.tsv"
    conda:
        "../envs/generation.yaml"
    threads: AUDIT["threads"]
    resources:
        mem_mb=mem_mb("canary_docs"),
        runtime=runtime("canary_docs"),
        gpu=GPUS_PER_JOB,
        gpu_memory_mb=gpu_memory_mb("canary_docs"),
    params:
        plan={"per_repeat": CANARIES["per_repeat"], "repeats": CANARIES["repeats"]},
        context_documents=config["generation"]["context_documents"],
        dp={key: config["dpsgd"][key] for key in ("delta", "privacy_unit")},
        model=lambda wildcards: model_source(MODEL_ID),
        placement=MODEL_PLACEMENT,
    script:
        "../scripts/canary_docs.py"


rule canary_adapter:
    """A trained method's adapter, trained as rule train_adapter trains it, on the canaried set."""
    input:
        docs=f"{CANARY_RUN}/docs.parquet",
        spans="results/{dataset}/spans.parquet",
        codes="results/{dataset}/{setting}/{idset}/codes.parquet",
        pools=config["codes"]["fictional_pools"],
        model=model_input(config["model"]["name_or_path"]),
    output:
        directory(f"{CANARY_RUN}/models/{{method}}"),
    log:
        "results/logs/canary_adapter/{dataset}_{setting}_{idset}_{method}_{seed}.log",
    benchmark:
        "results/benchmarks/canary_adapter/{dataset}_{setting}_{idset}_{method}_{seed}.tsv"
    wildcard_constraints:
        method=TRAINED_METHOD,
    conda:
        "../envs/generation.yaml"
    threads: config["prefix_tuning"]["threads"]
    resources:
        mem_mb=mem_mb("canary_adapter"),
        runtime=runtime("canary_adapter"),
        gpu=GPUS_PER_JOB,
        gpu_memory_mb=gpu_memory_mb("canary_adapter"),
    params:
        training=lambda wildcards: training_params(
            registry.method(wildcards.method), config["prefix_tuning"], config["dpsgd"]
        ),
        checkpoints=f"{CANARY_RUN}/checkpoints/{{method}}",
        model=lambda wildcards: model_source(MODEL_ID),
        placement=MODEL_PLACEMENT,
    script:
        "../scripts/train_adapter.py"


rule canary_generations:
    """The canary adapter's corpus, written as rule generate_trained writes a trained method's."""
    input:
        adapter=f"{CANARY_RUN}/models/{{method}}",
        codes="results/{dataset}/{setting}/{idset}/codes.parquet",
        fictional="results/{dataset}/{setting}/{idset}/fictional/seed{seed}.parquet",
        model=model_input(config["model"]["name_or_path"]),
    output:
        f"{CANARY_RUN}/synthetic/{{method}}.parquet",
    log:
        "results/logs/canary_generations/{dataset}_{setting}_{idset}_{method}_{seed}.log",
    benchmark:
        "results/benchmarks/canary_generations/{dataset}_{setting}_{idset}_{method}_{seed}.tsv"
    wildcard_constraints:
        method=TRAINED_METHOD,
    conda:
        "../envs/generation.yaml"
    threads: config["generation"]["threads"]
    resources:
        mem_mb=mem_mb("canary_generations"),
        runtime=runtime("canary_generations"),
        gpu=GPUS_PER_JOB,
        gpu_memory_mb=gpu_memory_mb("canary_generations"),
    params:
        generation=lambda wildcards: generation_params(
            registry.method(wildcards.method), config["generation"], "corpus"
        ),
        shard={"index": 0, "count": 1},
        generations=config["prefix_tuning"]["generations"],
        model=lambda wildcards: model_source(MODEL_ID),
        placement=MODEL_PLACEMENT,
    script:
        "../scripts/generate_corpus.py"


rule canary_generations_in_context:
    """An in-context method's corpus on the canaried set, written as rule generate_icl writes it: its prompts show the member canaries of their context documents."""
    input:
        docs=f"{CANARY_RUN}/docs.parquet",
        spans="results/{dataset}/spans.parquet",
        codes="results/{dataset}/{setting}/{idset}/codes.parquet",
        pools=config["codes"]["fictional_pools"],
        lists=SURROGATE_LISTS,
        model=lambda wildcards: model_input(variant_model(wildcards)),
    output:
        f"{CANARY_RUN}/synthetic/{{method}}.parquet",
    log:
        "results/logs/canary_generations_in_context/{dataset}_{setting}_{idset}_{method}_{seed}.log",
    benchmark:
        "results/benchmarks/canary_generations_in_context/{dataset}_{setting}_{idset}_{method}_{seed}.tsv"
    wildcard_constraints:
        method=IN_CONTEXT_METHOD,
    conda:
        "../envs/generation.yaml"
    threads: config["generation"]["threads"]
    resources:
        mem_mb=mem_mb("canary_generations_in_context"),
        runtime=runtime("canary_generations_in_context"),
        gpu=GPUS_PER_JOB,
        gpu_memory_mb=gpu_memory_mb("canary_generations_in_context"),
    params:
        generation=lambda wildcards: generation_params(
            registry.method(wildcards.method), config["generation"], "corpus"
        ),
        shard={"index": 0, "count": 1},
        surrogates=config["codes"]["surrogates"],
        model=lambda wildcards: model_source(variant_model(wildcards)),
        placement=MODEL_PLACEMENT,
    script:
        "../scripts/generate_corpus.py"


rule canary_attacks:
    """Each canary's scores under the attacks on one method's canary corpus: an n-gram model of the corpus and the longest shared word run; for a trained method also the adapter's likelihood ratio against the base model."""
    input:
        unpack(canary_adapter_input),
        canaries=f"{CANARY_RUN}/canaries.json",
        corpus=f"{CANARY_RUN}/synthetic/{{method}}.parquet",
    output:
        f"{CANARY_RUN}/{{method}}_attacks.parquet",
    log:
        "results/logs/canary_attacks/{dataset}_{setting}_{idset}_{method}_{seed}.log",
    benchmark:
        "results/benchmarks/canary_attacks/{dataset}_{setting}_{idset}_{method}_{seed}.tsv"
    wildcard_constraints:
        method=registry.wildcard_pattern(),
    conda:
        "../envs/generation.yaml"
    threads: AUDIT["threads"]
    resources:
        mem_mb=mem_mb("canary_attacks"),
        runtime=runtime("canary_attacks"),
        gpu=lambda wildcards: (
            GPUS_PER_JOB if registry.method(wildcards.method).trained else 0
        ),
        gpu_memory_mb=gpu_memory_mb("canary_attacks"),
    params:
        ngram={"order": CANARIES["ngram_order"], "add_k": CANARIES["ngram_add_k"]},
        batch_size=AUDIT["batch_size"],
        model=lambda wildcards: model_source(MODEL_ID),
        placement=MODEL_PLACEMENT,
    script:
        "../scripts/canary_attacks.py"


rule canary_table:
    """Per audited run, method, attack and insertion count: AUC, TPR at 1% and 10% FPR, the empirical epsilon lower bound beside the most its canaries could certify and DP-SGD's claim; the plot of AUC against insertions."""
    input:
        attacks=[
            f"{CANARY_RUN}/{{method}}_attacks.parquet".format(**run)
            for run in CANARY_RUNS
        ],
        canaries=[f"{CANARY_RUN}/canaries.json".format(**run) for run in CANARY_RUNS],
        adapters=[
            str(Path(canary_dp_record(run)).parent)
            for run in CANARY_RUNS
            if canary_dp_record(run)
        ],
    output:
        csv=report(
            "results/tables/canaries.csv",
            caption="../report/canaries.rst",
            category="Tables",
            labels={"table": "canaries", "content": "ours"},
        ),
        markdown="results/tables/canaries.md",
        plot=report(
            "results/plots/canaries_auc.png",
            caption="../report/canaries_auc.rst",
            category="Privacy audit",
            labels={"plot": "canary AUC", "run": "every audited run"},
        ),
    log:
        "results/logs/canary_table.log",
    conda:
        "../envs/metrics.yaml"
    params:
        runs=CANARY_RUNS,
        dp_records=[canary_dp_record(run) or None for run in CANARY_RUNS],
        bootstrap=AUDIT["bootstrap"],
    script:
        "../scripts/canary_table.py"
