//! Request bodies: read a body up to a bound, or stream it on with what was read put
//! back in front.

use bytes::{Bytes, BytesMut};
use http_body::{Body, Frame, SizeHint};
use http_body_util::BodyExt as _;
use hyper::body::Incoming;
use std::pin::Pin;
use std::task::{Context, Poll};

/// How reading a body up to a bound ended.
pub(crate) enum Read {
    /// The whole body (trailers, if any, are dropped: the APIs have none).
    Whole(Bytes),
    /// Over the bound: the bytes read so far and the rest, to stream on as they are.
    Over(Prefixed),
}

/// Reads `body` into memory while it stays within `max` bytes.
pub(crate) async fn read_bounded(mut body: Incoming, max: usize) -> Result<Read, hyper::Error> {
    let mut buf = BytesMut::new();
    while let Some(frame) = body.frame().await {
        let Ok(data) = frame?.into_data() else {
            continue;
        };
        if buf.len() + data.len() > max {
            buf.extend_from_slice(&data);
            return Ok(Read::Over(Prefixed {
                head: Some(buf.freeze()),
                rest: body,
            }));
        }
        buf.extend_from_slice(&data);
    }
    Ok(Read::Whole(buf.freeze()))
}

/// A body that yields `head` once, then the frames of `rest` as they arrive.
pub(crate) struct Prefixed {
    head: Option<Bytes>,
    rest: Incoming,
}

impl Body for Prefixed {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        if let Some(h) = self.head.take() {
            return Poll::Ready(Some(Ok(Frame::data(h))));
        }
        Pin::new(&mut self.rest).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.head.is_none() && self.rest.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        let head = self.head.as_ref().map_or(0, |h| h.len() as u64);
        let rest = self.rest.size_hint();
        let mut hint = SizeHint::new();
        hint.set_lower(rest.lower() + head);
        if let Some(u) = rest.upper() {
            hint.set_upper(u + head);
        }
        hint
    }
}
