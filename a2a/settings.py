"""Service settings: one validated object, from `config/cstp.yaml` and `CSTP_*` variables."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    AnyHttpUrl,
    BeforeValidator,
    Field,
    PrivateAttr,
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

from a2a.auth.tokens import TokenTable, load_token_table
from a2a.embeddings import DEFAULT_MODEL, MODELS
from a2a.limits.config import (
    check_limit,
    check_method_limits,
    check_storage_uri,
    method_limits_before,
)
from a2a.query.fusion import FusionMethod
from a2a.query.params import RetrievalMode
from a2a.similarity.weights import DEFAULT_WEIGHTS, SimilarityWeights

#: Where the settings file is looked for unless CSTP_CONFIG names another.
DEFAULT_CONFIG_FILE = Path("config/cstp.yaml")

PositiveSeconds = Annotated[float, Field(gt=0, allow_inf_nan=False)]


def _blank_is_none(value: Any) -> Any:
    return None if isinstance(value, str) and not value.strip() else value


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


def _check_networks(value: list[str]) -> list[str]:
    from a2a.auth.caller import TrustedProxies

    TrustedProxies(value)
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
    embedding_model: str = DEFAULT_MODEL
    chroma_timeout_seconds: PositiveSeconds = 10.0
    #: Reads answered from the loaded index this long after the last successful check with
    #: Chroma while it is unreachable, marked `stale` (docs/availability.md); 0: off.
    stale_reads_seconds: float = Field(default=300.0, ge=0, allow_inf_nan=False)
    #: Opt-in: embedded Chroma's own threads on one CPU core (a2a.store.affinity: its bulk
    #: writes cost about half as much here). Off by default: it sets the affinity of threads
    #: it finds by Chroma's thread names, a process-wide effect that a chromadb release
    #: renaming its threads silently undoes. No effect on a Chroma server.
    chroma_single_core: bool = False
    index_on_start: list[Path] = Field(default_factory=list)
    max_body_bytes: int = Field(default=1_048_576, ge=1024)
    max_batch_size: int = Field(default=50, ge=1)
    #: Records per `cstp index` batch (capped by Chroma's own limit; a2a.indexer).
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

    _token_table: TokenTable = PrivateAttr(default_factory=lambda: TokenTable([]))

    @model_validator(mode="after")
    def _parse_tokens(self) -> Settings:
        # The one parse of the tokens (environment and file); errors name the setting.
        self._token_table = load_token_table(self)
        return self

    @property
    def token_table(self) -> TokenTable:
        """The tokens of CSTP_AUTH_TOKENS and CSTP_AUTH_TOKENS_FILE (empty: auth off)."""
        return self._token_table

    @field_validator("embedding_model")
    @classmethod
    def _known_model(cls, value: str) -> str:
        if value not in MODELS:
            raise ValueError(f"unknown model {value!r}; choose one of {sorted(MODELS)}")
        return value

    @field_validator("chroma_url", "public_url", mode="before")
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


class SettingsError(Exception):
    """Settings that cannot start the service; `str()` names each offending setting."""


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
