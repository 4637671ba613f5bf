"""Who signs in and how: API tokens, the sign-in lockout, single sign-on, the
gateway's OAuth, account checks, local passwords.
"""

from datetime import timedelta

from django.core.exceptions import ImproperlyConfigured

from project.settings.base import AUTHENTICATION_BACKENDS, env, env_bool, env_list

# API tokens (agents/tokens.py): hours a new token lasts (0: until revoked), and
# how many one user keeps (signing in again ends the oldest past that).
TOOLCRIB_API_TOKEN_TTL_HOURS = float(env("TOOLCRIB_API_TOKEN_TTL_HOURS", "0"))
TOOLCRIB_API_TOKENS_PER_USER = int(env("TOOLCRIB_API_TOKENS_PER_USER", "20"))
if TOOLCRIB_API_TOKENS_PER_USER < 1:
    raise ImproperlyConfigured("TOOLCRIB_API_TOKENS_PER_USER must be at least 1.")
REST_KNOX = {
    "TOKEN_TTL": (
        timedelta(hours=TOOLCRIB_API_TOKEN_TTL_HOURS)
        if TOOLCRIB_API_TOKEN_TTL_HOURS > 0
        else None
    ),
}

# Password guessing (django-axes, project/lockout.py): this many failed sign-ins
# for one account from one client address refuse that account from that address
# (429) for the cool-off, on /api/auth/token/, /login/ and the admin; the account
# still signs in from elsewhere, and others from that address. One address failing
# TOOLCRIB_LOGIN_ADDRESS_FAILURE_LIMIT times, over any accounts, is refused for
# every account (0: no such limit); TOOLCRIB_LOGIN_FAILURE_LIMIT=0 turns the whole
# lockout off. The address is REMOTE_ADDR only, never a
# header a client can forge: behind a proxy, Daphne's --proxy-headers sets it from
# X-Forwarded-For, which the proxy must overwrite (docs/deployment.md).
TOOLCRIB_LOGIN_FAILURE_LIMIT = int(env("TOOLCRIB_LOGIN_FAILURE_LIMIT", "10"))
TOOLCRIB_LOGIN_ADDRESS_FAILURE_LIMIT = int(
    env("TOOLCRIB_LOGIN_ADDRESS_FAILURE_LIMIT", "100")
)
TOOLCRIB_LOGIN_COOLOFF_MINUTES = float(env("TOOLCRIB_LOGIN_COOLOFF_MINUTES", "15"))
if TOOLCRIB_LOGIN_COOLOFF_MINUTES <= 0:
    raise ImproperlyConfigured("TOOLCRIB_LOGIN_COOLOFF_MINUTES must be above 0.")
AXES_ENABLED = TOOLCRIB_LOGIN_FAILURE_LIMIT > 0
AXES_FAILURE_LIMIT = TOOLCRIB_LOGIN_FAILURE_LIMIT
AXES_COOLOFF_TIME = timedelta(minutes=TOOLCRIB_LOGIN_COOLOFF_MINUTES)
# The pair only: a username alone or an address alone would let anyone lock a
# person out of her account, or everyone at one address out of theirs. The
# handler adds the per-address limit.
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_HANDLER = "project.lockout.PairLockoutHandler"
# The cool-off runs from the last counted failure: attempts while locked out are
# refused without being counted, so "try again in N minutes" holds.
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
AXES_LOCKOUT_CALLABLE = "project.lockout.lockout_response"
# Failures are kept (AccessAttempt rows, shown in the admin); successful sign-ins
# are not logged, so the table does not grow with every token request.
AXES_DISABLE_ACCESS_LOG = True
AXES_VERBOSE = False

# Single sign-on with OpenID Connect (toolsets/sso/, docs/permissions.md), on when
# TOOLCRIB_OIDC_ISSUER is set: the provider's endpoints come from its discovery
# document, fetched at the first sign-in and cached. Users are created at their
# first sign-in; their groups that TOOLCRIB_OIDC_MANAGED_GROUPS matches (patterns,
# default all) follow TOOLCRIB_OIDC_GROUPS_CLAIM at every sign-in, added and
# removed; other groups are Toolcrib's own, never touched by a sign-in.
TOOLCRIB_OIDC_ISSUER = env("TOOLCRIB_OIDC_ISSUER").strip().rstrip("/")
TOOLCRIB_OIDC_PROVIDER_NAME = env("TOOLCRIB_OIDC_PROVIDER_NAME", "single sign-on")
TOOLCRIB_OIDC_USERNAME_CLAIM = env("TOOLCRIB_OIDC_USERNAME_CLAIM", "preferred_username")
TOOLCRIB_OIDC_GROUPS_CLAIM = env("TOOLCRIB_OIDC_GROUPS_CLAIM", "groups")
TOOLCRIB_OIDC_MANAGED_GROUPS = env_list("TOOLCRIB_OIDC_MANAGED_GROUPS", "*")
# Staff status follows membership of this claimed group when set; unset, never touched.
TOOLCRIB_OIDC_STAFF_GROUP = env("TOOLCRIB_OIDC_STAFF_GROUP").strip()
OIDC_RP_CLIENT_ID = env("TOOLCRIB_OIDC_CLIENT_ID")
OIDC_RP_CLIENT_SECRET = env("TOOLCRIB_OIDC_CLIENT_SECRET")
OIDC_RP_SCOPES = env("TOOLCRIB_OIDC_SCOPES", "openid email profile")
OIDC_RP_SIGN_ALGO = env("TOOLCRIB_OIDC_SIGN_ALGO", "RS256")
if TOOLCRIB_OIDC_ISSUER:
    if not TOOLCRIB_OIDC_ISSUER.startswith(("https://", "http://")):
        raise ImproperlyConfigured(
            "TOOLCRIB_OIDC_ISSUER must be an https:// or http:// URL."
        )
    if not (OIDC_RP_CLIENT_ID and OIDC_RP_CLIENT_SECRET):
        raise ImproperlyConfigured(
            "TOOLCRIB_OIDC_ISSUER is set: set TOOLCRIB_OIDC_CLIENT_ID and "
            "TOOLCRIB_OIDC_CLIENT_SECRET too."
        )
    if "openid" not in OIDC_RP_SCOPES.split():
        raise ImproperlyConfigured("TOOLCRIB_OIDC_SCOPES must include openid.")
# The tool gateway as an OAuth 2.1 protected resource (toolsets/gateway/oauth.py,
# docs/gateway.md), on when TOOLCRIB_GATEWAY_URL is set: its canonical URL
# (https://toolcrib.example.com/mcp), the audience (RFC 8707 resource) its access
# tokens must name. The authorization server is the provider of TOOLCRIB_OIDC_ISSUER;
# TOOLCRIB_GATEWAY_OAUTH_SCOPES (comma-separated, default none) are listed in the
# resource's metadata and required of every access token.
TOOLCRIB_GATEWAY_URL = env("TOOLCRIB_GATEWAY_URL").strip().rstrip("/")
TOOLCRIB_GATEWAY_OAUTH_SCOPES = env_list("TOOLCRIB_GATEWAY_OAUTH_SCOPES")
if TOOLCRIB_GATEWAY_URL:
    if not TOOLCRIB_OIDC_ISSUER:
        raise ImproperlyConfigured(
            "TOOLCRIB_GATEWAY_URL is set: set TOOLCRIB_OIDC_ISSUER too (the "
            "provider that issues the gateway's access tokens)."
        )
    if not (
        TOOLCRIB_GATEWAY_URL.startswith(("https://", "http://"))
        and TOOLCRIB_GATEWAY_URL.endswith("/mcp")
    ):
        raise ImproperlyConfigured(
            "TOOLCRIB_GATEWAY_URL must be the gateway's URL: https://<host>/mcp."
        )
# A linked user's every request (web session, API token, socket, gateway token)
# asks the provider about her again once her last check is this many seconds old
# (toolsets/sso/recheck.py, docs/deployment.md): removed there, she loses access
# here within it; her groups and staff status follow its claims. 0: every request.
TOOLCRIB_SSO_RECHECK_SECONDS = int(env("TOOLCRIB_SSO_RECHECK_SECONDS", "300"))
if TOOLCRIB_SSO_RECHECK_SECONDS < 0:
    raise ImproperlyConfigured("TOOLCRIB_SSO_RECHECK_SECONDS must be 0 or more.")
# What every request of a signed-in account passes, as dotted paths of callables
# taking `user=` and raising project.errors.SignInEnded (agents/account_checks.py).
TOOLCRIB_ACCOUNT_CHECKS: list[str] = ["toolsets.sso.recheck.check_account"]
# What an approver may change a held call's arguments to (agents.requests.edits):
# governance's checks, by name, as the runtime receives its plugins.
TOOLCRIB_APPROVAL_ARGUMENT_CHECKS: list[str] = [
    "toolsets.governance.edits.check_arguments"
]
# mozilla-django-oidc's own settings: PKCE, the client secret in a Basic header
# (the token endpoint's default), seconds per call to the provider.
OIDC_USE_PKCE = True
OIDC_TOKEN_USE_BASIC_AUTH = True
OIDC_TIMEOUT = 10
LOGIN_REDIRECT_URL_FAILURE = "/login/?sso=failed"
# Local passwords (the /login/ form, POST /api/auth/token/, the admin's form): on
# by default for the embedded setup; off, only the provider signs people in.
TOOLCRIB_PASSWORD_LOGIN = env_bool("TOOLCRIB_PASSWORD_LOGIN", True)
if not TOOLCRIB_PASSWORD_LOGIN and not TOOLCRIB_OIDC_ISSUER:
    raise ImproperlyConfigured(
        "TOOLCRIB_PASSWORD_LOGIN is off and TOOLCRIB_OIDC_ISSUER is not set: "
        "nobody could sign in."
    )
if not TOOLCRIB_PASSWORD_LOGIN:
    AUTHENTICATION_BACKENDS.remove("django.contrib.auth.backends.ModelBackend")


# Django's own rules for a password chosen here: by staff creating an account
# (POST /api/users/) and by an invitee (/invite/<token>/).
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": f"django.contrib.auth.password_validation.{name}"}
    for name in (
        "UserAttributeSimilarityValidator",
        "MinimumLengthValidator",
        "CommonPasswordValidator",
        "NumericPasswordValidator",
    )
]
PASSWORD_HASHERS = (
    ["django.contrib.auth.hashers.MD5PasswordHasher"]
    if env_bool("TOOLCRIB_FAST_HASHER")
    else [
        "django.contrib.auth.hashers.PBKDF2PasswordHasher",
        "django.contrib.auth.hashers.MD5PasswordHasher",
    ]
)
