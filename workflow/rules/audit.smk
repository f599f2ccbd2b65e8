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
        model=lambda wildcards: model_source(BASE_MODEL),
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
        metrics={**config["metrics"], "verbatim_ngram": AUDIT["verbatim_ngram"]},
        verbatim_ngram=AUDIT["verbatim_ngram"],
        bootstrap=AUDIT["bootstrap"],
        gate=config["release"]["gate"],
        delta=config["dpsgd"]["delta"],
        placement=MODEL_PLACEMENT,
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
            f"{AUDIT_RUN}/audit/{POSITIVE_CONTROL}/seed{{seed}}_released.json".format(**run)
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
    """The fine-tuning set with canaries: random secrets in one sentence, in 1, 4 and 16 documents."""
    input:
        docs="results/{dataset}/docs.parquet",
        codes="results/{dataset}/{setting}/{idset}/codes.parquet",
        spec=AUDIT["canaries"]["file"],
    output:
        docs="results/{dataset}/{setting}/{idset}/canaries/seed{seed}/docs.parquet",
        canaries="results/{dataset}/{setting}/{idset}/canaries/seed{seed}/canaries.json",
    log:
        "results/logs/canary_docs/{dataset}_{setting}_{idset}_{seed}.log",
    conda:
        "../envs/metrics.yaml"
    params:
        per_repeat=AUDIT["canaries"]["per_repeat"],
        candidates=AUDIT["canaries"]["candidates"],
    script:
        "../scripts/canary_docs.py"


rule canary_adapter:
    """A trained method's adapter, trained as rule train_adapter trains it, on the canaried set."""
    input:
        docs="results/{dataset}/{setting}/{idset}/canaries/seed{seed}/docs.parquet",
        spans="results/{dataset}/spans.parquet",
        codes="results/{dataset}/{setting}/{idset}/codes.parquet",
        pools=config["codes"]["fictional_pools"],
        model=model_input(config["model"]["name_or_path"]),
    output:
        directory(
            "results/{dataset}/{setting}/{idset}/canaries/seed{seed}/models/{method}"
        ),
    log:
        "results/logs/canary_adapter/{dataset}_{setting}_{idset}_{method}_{seed}.log",
    wildcard_constraints:
        method=TRAINED_METHOD,
    conda:
        "../envs/generation.yaml"
    threads: config["prefix_tuning"]["threads"]
    resources:
        mem_mb=mem_mb("train_adapter"),
        runtime=runtime("train_adapter"),
        gpu=GPUS_PER_JOB,
        gpu_memory_mb=gpu_memory_mb("train_adapter"),
    params:
        training=lambda wildcards: training_params(
            registry.method(wildcards.method), config["prefix_tuning"], config["dpsgd"]
        ),
        checkpoints="results/{dataset}/{setting}/{idset}/canaries/seed{seed}/checkpoints/{method}",
        model=lambda wildcards: model_source(BASE_MODEL),
        placement=MODEL_PLACEMENT,
    script:
        "../scripts/train_adapter.py"


rule canary_generations:
    """The canary adapter's corpus, written as rule generate_trained writes a trained method's."""
    input:
        adapter="results/{dataset}/{setting}/{idset}/canaries/seed{seed}/models/{method}",
        codes="results/{dataset}/{setting}/{idset}/codes.parquet",
        fictional="results/{dataset}/{setting}/{idset}/fictional/seed{seed}.parquet",
        model=model_input(config["model"]["name_or_path"]),
    output:
        "results/{dataset}/{setting}/{idset}/canaries/seed{seed}/synthetic/{method}.parquet",
    log:
        "results/logs/canary_generations/{dataset}_{setting}_{idset}_{method}_{seed}.log",
    wildcard_constraints:
        method=TRAINED_METHOD,
    conda:
        "../envs/generation.yaml"
    threads: config["generation"]["threads"]
    resources:
        mem_mb=mem_mb("generate_trained"),
        runtime=runtime("generate_trained"),
        gpu=GPUS_PER_JOB,
        gpu_memory_mb=gpu_memory_mb("generate_trained"),
    params:
        generation=lambda wildcards: generation_params(
            registry.method(wildcards.method), config["generation"], "corpus"
        ),
        shard={"index": 0, "count": 1},
        generations=config["prefix_tuning"]["generations"],
        model=lambda wildcards: model_source(BASE_MODEL),
        placement=MODEL_PLACEMENT,
    script:
        "../scripts/generate_corpus.py"


rule canary_exposure:
    """Each canary's exposure under the canary adapter, and its appearances in that adapter's corpus."""
    input:
        adapter="results/{dataset}/{setting}/{idset}/canaries/seed{seed}/models/{method}",
        canaries="results/{dataset}/{setting}/{idset}/canaries/seed{seed}/canaries.json",
        generations="results/{dataset}/{setting}/{idset}/canaries/seed{seed}/synthetic/{method}.parquet",
        spec=AUDIT["canaries"]["file"],
        model=model_input(config["model"]["name_or_path"]),
    output:
        "results/{dataset}/{setting}/{idset}/canaries/seed{seed}/{method}_exposure.parquet",
    log:
        "results/logs/canary_exposure/{dataset}_{setting}_{idset}_{method}_{seed}.log",
    wildcard_constraints:
        method=TRAINED_METHOD,
    conda:
        "../envs/generation.yaml"
    threads: AUDIT["threads"]
    resources:
        gpu=GPUS_PER_JOB,
    params:
        per_repeat=AUDIT["canaries"]["per_repeat"],
        candidates=AUDIT["canaries"]["candidates"],
        max_length=config["prefix_tuning"]["max_length"],
        model=lambda wildcards: model_source(BASE_MODEL),
        placement=MODEL_PLACEMENT,
    script:
        "../scripts/canary_exposure.py"


rule canary_table:
    """Canary exposure per audited run, trained method and insertion count."""
    input:
        reports=[
            f"{AUDIT_RUN}/canaries/seed{{seed}}/{{method}}_exposure.parquet".format(
                **run
            )
            for run in CANARY_RUNS
        ],
    output:
        csv=report(
            "results/tables/canaries.csv",
            caption="../report/canaries.rst",
            category="Tables",
            labels={"table": "canaries", "content": "ours"},
        ),
        markdown="results/tables/canaries.md",
    log:
        "results/logs/canary_table.log",
    conda:
        "../envs/metrics.yaml"
    params:
        runs=CANARY_RUNS,
    script:
        "../scripts/canary_table.py"
