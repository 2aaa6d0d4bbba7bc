"""Service settings: one validated object, from `config/cstp.yaml` and `CSTP_*` variables."""

from __future__ import annotations

import ipaddress
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Final, Literal, Self
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    AnyHttpUrl,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import (
    BaseSettings,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    YamlConfigSettingsSource,
)
from pydantic_settings import SettingsError as PydanticSettingsError

from a2a.errors import SettingsError

if TYPE_CHECKING:  # `limits` loads when a limit is parsed: the client commands never do
    from limits import RateLimitItem

# Settings is the lowest layer: it imports nothing of a2a (import-linter checks it, in
# pyproject.toml). The value types it validates live here; the composition root turns the
# values into objects (token table, rate limits, stores) and passes them down.

#: Retrieval modes of cstp.queryDecisions (CONTRACT.md, `retrievalMode`).
RetrievalMode = Literal["semantic", "keyword", "hybrid"]
#: Score fusions of hybrid retrieval (a2a.query.fusion).
FusionMethod = Literal["rrf", "minmax", "dbsf", "tmm"]
#: The embedding models a2a.embeddings can load, by name; the first is the default.
EMBEDDING_MODELS: Final = (
    "all-minilm-l6-v2-int8",
    "wordllama-l2-supercat-256",
    "chroma-onnx-all-minilm-l6-v2",
)
DEFAULT_MODEL: Final = EMBEDDING_MODELS[0]
#: Where vectors come from: `bundled`, one of EMBEDDING_MODELS in this process; `openai`, a
#: service speaking the OpenAI embeddings API (CONTRACT.md, Embedding providers).
EmbeddingProvider = Literal["bundled", "openai"]

#: Where the settings file is looked for unless CSTP_CONFIG names another.
DEFAULT_CONFIG_FILE = Path("config/cstp.yaml")

PositiveSeconds = Annotated[float, Field(gt=0, allow_inf_nan=False)]


def _blank_is_none(value: Any) -> Any:
    return None if isinstance(value, str) and not value.strip() else value


#: Storage schemes served (sync `limits` storages, run in worker threads). `memory://` keeps
#: limits per process; the Redis ones share them between processes.
STORAGE_SCHEMES = ("memory", "redis", "rediss", "redis+unix")
#: The scope of the overall per-agent limit, which no JSON-RPC method name can take.
ANY_METHOD = "*"


def parse_limit(text: str) -> list[RateLimitItem]:
    """`"120/minute"` or `"10/second;600/hour"` as limit items (limits' string notation).

    Raises ValueError, without library internals, when `text` is not such a string.
    """
    from limits import parse_many

    try:
        return parse_many(text)
    except ValueError:
        raise ValueError(
            f"{text!r} is not a limit like '120/minute' or '10/second;600/hour'"
        ) from None


def check_limit(text: str | None) -> str | None:
    """Settings validator: a parseable limit string, or None (no limit)."""
    if text is not None:
        parse_limit(text)
    return text


def method_limits_before(value: Any) -> Any:
    """Settings pre-validator: `"m1=120/minute,m2=10/second"` (or JSON) as a dict.

    CSTP_RATE_LIMITS is written as comma-separated `method=limit` pairs; a JSON object and
    the YAML mapping of config/cstp.yaml are taken as they are. Raises ValueError for a pair
    without `=`.
    """
    if not isinstance(value, str):
        return value
    text = value.strip()
    if text.startswith("{"):
        return json.loads(text)
    pairs: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        method, sep, limit = (part.strip() for part in item.partition("="))
        if not sep or not method:
            raise ValueError(f"{item!r} is not method=limit (e.g. cstp.queryDecisions=120/minute)")
        pairs[method] = limit
    return pairs


def check_method_limits(value: dict[str, str]) -> dict[str, str]:
    """Settings validator: every value a limit string, no method named like a scope."""
    for method, limit in value.items():
        if method == ANY_METHOD or not method or any(c.isspace() for c in method):
            raise ValueError(f"{method!r} is not a method name")
        try:
            parse_limit(limit)
        except ValueError as exc:
            raise ValueError(f"{method}: {exc}") from None
    return value


def check_storage_uri(value: str) -> str:
    """Settings validator: a `memory://` or Redis URI (see STORAGE_SCHEMES)."""
    scheme = urlsplit(value).scheme
    if scheme not in STORAGE_SCHEMES or "://" not in value:
        raise ValueError(f"storage must be one of {', '.join(s + '://' for s in STORAGE_SCHEMES)}")
    return value


#: How far the weights may sum from 1 before start-up fails (float rounding in a config file).
SUM_TOLERANCE = 1e-9

Weight = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]


class SimilarityWeights(BaseModel):
    """Weight of each score component: each a finite number in [0, 1], all three summing to 1.

    Setting `similarity_weights` (env CSTP_SIMILARITY_WEIGHTS, JSON
    `{"tags": 0.6, "category": 0.25, "stakes": 0.15}`). All three keys are required, so a
    partial object fails rather than mixing with the defaults. Raises pydantic.ValidationError
    when a weight is missing, unknown, not a number, out of range, or the sum is off by more
    than SUM_TOLERANCE.
    """

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    tags: Weight
    category: Weight
    stakes: Weight

    @model_validator(mode="after")
    def _sum_is_one(self) -> Self:
        total = self.tags + self.category + self.stakes
        if abs(total - 1.0) > SUM_TOLERANCE:
            raise ValueError(f"weights sum to {total:.12g}; they must sum to 1")
        return self


#: The structural-similarity spike's weights (shared/seeds/000): Jaccard over the affected
#: set 0.60, kind match 0.25, magnitude match 0.15.
DEFAULT_WEIGHTS = SimilarityWeights(tags=0.60, category=0.25, stakes=0.15)


#: `agent1:token1,agent2:token2:read+write`; never echoed (SecretStr) nor named in errors.
AuthTokens = Annotated[SecretStr | None, BeforeValidator(_blank_is_none)]
TokenFile = Annotated[Path | None, BeforeValidator(_blank_is_none)]
#: A limit in `limits` notation: `120/minute`, `10/second;600/hour`.
LimitText = Annotated[str | None, BeforeValidator(_blank_is_none), AfterValidator(check_limit)]
#: method -> limit; from the environment as `m1=120/minute,m2=10/second` (not JSON-decoded).
MethodLimits = Annotated[
    dict[str, str],
    NoDecode,
    BeforeValidator(method_limits_before),
    AfterValidator(check_method_limits),
]
StorageUri = Annotated[str, AfterValidator(check_storage_uri)]


def _comma_list(value: Any) -> Any:
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return value


Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def parse_networks(texts: Iterable[str]) -> list[Network]:
    """Addresses or CIDR blocks as networks. Raises ValueError naming a bad one."""
    networks: list[Network] = []
    for text in texts:
        try:
            networks.append(ipaddress.ip_network(text.strip(), strict=False))
        except ValueError:
            raise ValueError(f"{text!r} is not an IP address or CIDR block") from None
    return networks


def _check_networks(value: list[str]) -> list[str]:
    parse_networks(value)
    return value


#: Addresses or CIDR blocks, `10.0.0.1,192.168.0.0/16` in the environment.
Networks = Annotated[
    list[str], NoDecode, BeforeValidator(_comma_list), AfterValidator(_check_networks)
]


class Settings(BaseSettings):
    """Every setting of the service. Environment (`CSTP_<NAME>`) beats the YAML file.

    Raises pydantic.ValidationError, naming the setting, when a value is invalid.
    """

    model_config = SettingsConfigDict(
        env_prefix="CSTP_", extra="forbid", validate_default=True, frozen=True
    )

    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=0, le=65535)
    agent_id: str = Field(default="cstp", min_length=1)
    data_dir: Path = Path("var/cstp")
    chroma_url: AnyHttpUrl | None = None
    collection: str = Field(default="decisions", min_length=3, max_length=63)
    #: `bundled`: one of EMBEDDING_MODELS; `openai`: the provider's own model name.
    embedding_model: str = DEFAULT_MODEL
    # An embedding provider (docs/configuration.md, Embedding providers): its base URL (calls
    # go to {url}/embeddings), bearer token, `dimensions` asked for (None: the model's own,
    # learnt from one call at start-up) and inputs per request.
    embedding_provider: EmbeddingProvider = "bundled"
    embedding_url: AnyHttpUrl | None = None
    embedding_api_key: Annotated[SecretStr | None, BeforeValidator(_blank_is_none)] = None
    embedding_dimensions: Annotated[
        Annotated[int, Field(ge=1, le=65_536)] | None, BeforeValidator(_blank_is_none)
    ] = None
    embedding_batch: int = Field(default=64, ge=1, le=2048)
    #: Cosine distance past which a result list is a broad match (`broadMatch: true`,
    #: CONTRACT.md): None takes the embedding model's measured line
    #: (a2a.query.matching.MEASURED_LINES); a model with none then gets no broadMatch.
    broad_match_distance: float | None = Field(default=None, ge=0, le=2, allow_inf_nan=False)
    chroma_timeout_seconds: PositiveSeconds = 10.0
    #: Reads answered from the loaded index this long after the last successful check with
    #: Chroma while it is unreachable, marked `stale` (docs/availability.md); 0: off.
    stale_reads_seconds: float = Field(default=300.0, ge=0, allow_inf_nan=False)
    #: Opt-in: embedded Chroma's own threads on one CPU core (a2a.store.affinity: its bulk
    #: writes cost about half as much here). Off by default: it sets the affinity of threads
    #: it finds by Chroma's thread names, a process-wide effect that a chromadb release
    #: renaming its threads silently undoes. No effect on a Chroma server.
    chroma_single_core: bool = False
    #: Embedded store: writes are refused (-32003, `reason` "disk full") while the data
    #: folder's filesystem has less than this free (MiB), before they reach Chroma, which
    #: can wedge the process after a write failed on a full disk (a2a.store.disk); 0: off.
    min_free_disk_mib: int = Field(default=256, ge=0)
    index_on_start: list[Path] = Field(default_factory=list)
    max_body_bytes: int = Field(default=1_048_576, ge=1024)
    max_batch_size: int = Field(default=50, ge=1)
    #: Records per `cstp index` batch (capped by Chroma's own limit; a2a.ingest.indexer).
    index_batch_size: int = Field(default=5000, ge=1)
    max_json_depth: int = Field(default=64, ge=2)
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    # Observability (README section Deploy): log lines as JSON or text; /metrics open or not.
    log_format: Literal["json", "text"] = "text"
    metrics_open: bool = True
    # Retrieval (README, Retrieval modes and their quality): the mode a query without
    # retrievalMode gets, and the hybrid fusion with its parameters. The fusion is the one
    # with the best worst case over two sets of dev queries (docs/ranking.md): theoretical
    # min-max, 0.9/0.1, above both single modes on both sets; rrf k=100 0.4/0.6 (the
    # previous default, tuned on one set) fell below semantic alone on the second.
    default_retrieval_mode: RetrievalMode = "semantic"
    fusion_method: FusionMethod = "tmm"
    hybrid_rrf_k: int = Field(default=100, ge=1)
    hybrid_semantic_weight: float = Field(default=0.9, ge=0, allow_inf_nan=False)
    hybrid_keyword_weight: float = Field(default=0.1, ge=0, allow_inf_nan=False)
    hybrid_candidates: int = Field(default=50, ge=1, le=10_000)
    # Search index (a2a.index): how vectors are held in memory, and how far back a freshness
    # check looks for other writers' records (their clock skew plus their slowest write).
    index_vector_dtype: Literal["float32", "float16"] = "float32"
    index_freshness_margin_seconds: PositiveSeconds = 10.0
    # Snapshots of the search index (docs/scaling.md, Snapshots): the folder (None:
    # <data_dir>/index/<collection>; replicas may share one, read-only for all but one),
    # and the records from which one is written (below it a load from Chroma is quick).
    index_snapshot_dir: Path | None = None
    index_snapshot_min_records: int = Field(default=2_000, ge=0)
    #: The records from which a store's semantic search walks its HNSW graph instead of
    #: scanning (a2a.index.search_index.GRAPH_MIN_ROWS, docs/scaling.md); the graph itself
    #: is built from this many or 5,000, the fewer (org-level search walks it from 5,000).
    index_graph_min_rows: int = Field(default=50_000, ge=1)
    # Tenants (CONTRACT.md, Tenants): the loaded indexes' memory past which the least
    # recently used tenants' are evicted (MiB; None: never evicted).
    index_memory_mib: int | None = Field(default=None, ge=1)
    # Auth and rate limits (README section Agents, tokens and rate limits).
    auth_tokens: AuthTokens = None
    auth_tokens_file: TokenFile = None
    rate_limits: MethodLimits = Field(default_factory=dict)
    rate_limit_default: LimitText = None
    rate_limit_storage: StorageUri = "memory://"
    rate_limit_fail_closed: bool = False
    workers: int = Field(default=1, ge=1)
    # Pipeline edges (README sections Overload, Proxies and public URL, Body timeout).
    worker_threads: int = Field(default=8, ge=1, le=256)
    worker_queue: int = Field(default=256, ge=0)
    worker_queue_timeout_seconds: PositiveSeconds = 5.0
    body_timeout_seconds: PositiveSeconds = 10.0
    trusted_proxies: Networks = Field(default_factory=list)
    public_url: AnyHttpUrl | None = None
    # cstp.searchDocs: the YAML catalog of Markdown docs it searches (README, Other doors).
    # None: the operator guide shipped in the package (a2a/docs/guide/catalog.yaml).
    docs_catalog: Path | None = None
    # cstp.findSimilarDecisions score weights; JSON in the environment, summing to 1.
    similarity_weights: SimilarityWeights = DEFAULT_WEIGHTS
    # cstp.listDecisions: HMAC key of its cursors; replicas behind one address need the
    # same one. None: a random key per process (a cursor then works on its issuer only).
    # Blank is unset (a per-process key): an empty key would sign cursors anyone can forge.
    cursor_secret: Annotated[SecretStr | None, BeforeValidator(_blank_is_none)] = None
    # Federation (docs/federation.md; CONTRACT.md, Federation): the TOML file naming the
    # peer services (None: no peers), and how long each peer may take to answer a call.
    peers_file: TokenFile = None
    peer_timeout_seconds: float = Field(default=2.0, gt=0, le=60, allow_inf_nan=False)
    # Guardrails (docs/guardrails.md; CONTRACT.md, Guardrails): the TOML file of rules in CEL
    # that cstp.checkGuardrails evaluates (None: no rules, every check allows).
    guardrails_file: TokenFile = None

    @model_validator(mode="after")
    def _known_model(self) -> Self:
        """A bundled model by one of its names; a provider with its URL and a model name of
        its own (the shipped config file names the bundled default, which no provider has)."""
        model = self.embedding_model
        if self.embedding_provider == "bundled":
            if model not in EMBEDDING_MODELS:
                raise ValueError(
                    f"CSTP_EMBEDDING_MODEL (embedding_model): unknown model {model!r}; choose "
                    f"one of {sorted(EMBEDDING_MODELS)}, or set CSTP_EMBEDDING_PROVIDER=openai"
                )
            return self
        if self.embedding_url is None:
            raise ValueError(
                "CSTP_EMBEDDING_URL (embedding_url): required with CSTP_EMBEDDING_PROVIDER="
                f"{self.embedding_provider} (e.g. https://api.openai.com/v1)"
            )
        if not model.strip() or model in EMBEDDING_MODELS:
            raise ValueError(
                "CSTP_EMBEDDING_MODEL (embedding_model): name the provider's model (e.g. "
                f"text-embedding-3-small), not {model!r}"
            )
        return self

    @field_validator("chroma_url", "public_url", "embedding_url", mode="before")
    @classmethod
    def _empty_url_is_none(cls, value: Any) -> Any:
        return None if value == "" else value

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        config_file = Path(os.environ.get("CSTP_CONFIG", DEFAULT_CONFIG_FILE))
        yaml_source = YamlConfigSettingsSource(settings_cls, yaml_file=config_file)
        return (init_settings, env_settings, yaml_source)

    @property
    def store_lock_path(self) -> Path:
        """The file whose lock says which process owns the embedded store."""
        return self.data_dir / "cstp.lock"


def load_settings(**overrides: Any) -> Settings:
    """Settings from the environment and the config file, `overrides` winning.

    Raises SettingsError naming each bad setting as `CSTP_<NAME>` and its problem.
    """
    config_file = Path(os.environ.get("CSTP_CONFIG", DEFAULT_CONFIG_FILE))
    if "CSTP_CONFIG" in os.environ and not config_file.is_file():
        raise SettingsError(f"CSTP_CONFIG: no such file {config_file}")
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        problems = []
        for error in exc.errors(include_url=False):
            name = ".".join(str(part) for part in error["loc"])
            if not name:
                # A check across settings; its message names them (CSTP_AUTH_TOKENS...).
                problems.append(error["msg"].removeprefix("Value error, "))
                continue
            problems.append(f"CSTP_{name.upper()} ({name}): {error['msg']}")
        raise SettingsError("invalid settings: " + "; ".join(problems)) from None
    except PydanticSettingsError as exc:
        # A list or mapping variable that is not JSON, e.g. CSTP_INDEX_ON_START=examples.
        field = str(exc).partition('field "')[2].partition('"')[0] or "settings"
        raise SettingsError(
            f"invalid settings: CSTP_{field.upper()} ({field}): not valid JSON "
            f"(lists and mappings are written as JSON, e.g. '[\"examples/decisions\"]')"
        ) from None
