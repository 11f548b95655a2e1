//! Upstreams: which provider a request goes to, and the base URL it is sent to.

use crate::Error;
use hyper::http::uri::{Authority, PathAndQuery, Scheme};
use hyper::Uri;

/// An API provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    /// Anthropic (Messages API).
    Anthropic,
    /// OpenAI (Chat Completions, Responses) and compatible servers.
    OpenAi,
}

impl Provider {
    /// `anthropic` or `openai`.
    pub fn name(self) -> &'static str {
        match self {
            Provider::Anthropic => "anthropic",
            Provider::OpenAi => "openai",
        }
    }
}

/// A base URL requests are forwarded to: scheme, host and port, and a path prefix
/// (empty, or starting with `/` and without a trailing `/`) put before the request's
/// own path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upstream {
    scheme: Scheme,
    authority: Authority,
    prefix: String,
}

impl Upstream {
    /// The provider's public HTTPS API host.
    pub fn default_for(p: Provider) -> Self {
        let url = match p {
            Provider::Anthropic => "https://api.anthropic.com",
            Provider::OpenAi => "https://api.openai.com",
        };
        Upstream::parse(url).expect("built-in upstream URLs parse")
    }

    /// Parses `http://HOST[:PORT][/PREFIX]` or `https://…`.
    ///
    /// # Errors
    /// [`Error::Upstream`] for another scheme, no host, a query or fragment.
    pub fn parse(url: &str) -> Result<Self, Error> {
        let bad = |why: &str| Error::Upstream {
            url: url.to_string(),
            why: why.to_string(),
        };
        let uri: Uri = url.parse().map_err(|e| bad(&format!("{e}")))?;
        let scheme = uri.scheme().cloned().ok_or_else(|| bad("no scheme"))?;
        if scheme != Scheme::HTTP && scheme != Scheme::HTTPS {
            return Err(bad("the scheme must be http or https"));
        }
        let authority = uri.authority().cloned().ok_or_else(|| bad("no host"))?;
        if authority.as_str().contains('@') {
            return Err(bad("user info is not allowed"));
        }
        if uri.query().is_some() || url.contains('#') {
            return Err(bad("a query or fragment is not allowed"));
        }
        let prefix = uri.path().trim_end_matches('/').to_string();
        Ok(Upstream {
            scheme,
            authority,
            prefix,
        })
    }

    /// The `Host` header value for requests to it.
    pub fn authority(&self) -> &str {
        self.authority.as_str()
    }

    /// The absolute URI for an origin-form request target `path_and_query`.
    pub(crate) fn uri_for(&self, path_and_query: &str) -> Option<Uri> {
        let pq: PathAndQuery = format!("{}{}", self.prefix, path_and_query).parse().ok()?;
        Uri::builder()
            .scheme(self.scheme.clone())
            .authority(self.authority.clone())
            .path_and_query(pq)
            .build()
            .ok()
    }
}

impl std::fmt::Display for Upstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}://{}{}", self.scheme, self.authority, self.prefix)
    }
}
