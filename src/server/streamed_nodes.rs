//! Reading a large /filter or /prioritize body (`Nodes`: every candidate as a full Node object,
//! kube-scheduler's `nodeCacheCapable: false`) without holding it whole.
//!
//! As the body arrives, [`ItemSplitter`] takes each `Nodes.items` element out into blocks of about
//! [`BLOCK_BYTES`]; each sealed block is decoded on the evaluator's pool (its nodes, as
//! [`crate::wire::ExtenderArgs::decode`] would) and, for /filter, whose answer echoes the feasible
//! items verbatim, compressed ([`ItemArchive`]); a /prioritize answer echoes none, so its items'
//! bytes are dropped once decoded. At most [`BLOCKS_IN_FLIGHT`] blocks wait for the pool: past
//! that the read waits, and TCP slows the client. Decoding overlaps the body's arrival, and what
//! the request holds is its decoded nodes, the compressed items and the skeleton (the body without
//! its items, a few KB).

use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, StatusCode};
use parking_lot::Mutex;
use serde::de::IgnoredAny;
use tokio::sync::Semaphore;

use crate::server::body::{read_into, BodyError, BodySink};
use crate::server::item_archive::{Block, ItemArchive, ItemAt};
use crate::wire::args::{decode_node, ItemPath};
use crate::wire::item_splitter::{ItemSplitter, Placeholders, SealedBlock, Split};
use crate::wire::predecoded::Predecoded;
use crate::wire::WireError;
use predicate_engine::cluster::node_images::without_images;
use predicate_engine::cluster::objects::Node;
use predicate_engine::engine::Evaluator;

/// Items are sealed into blocks of about this many bytes (at the end of the item that reaches it).
const BLOCK_BYTES: usize = 128 << 10;

/// Sealed blocks waiting for or on the pool, at most.
const BLOCKS_IN_FLIGHT: usize = 16;

/// A streamed body: its skeleton (the body to decode, placeholders for the items), the items'
/// nodes, and for /filter their bytes.
#[derive(Debug)]
pub(crate) struct StreamedBody {
    pub skeleton: Bytes,
    pub predecoded: Predecoded,
    pub archive: Option<Arc<ItemArchive>>,
}

/// One block once the pool is done with it.
struct BlockDone {
    nodes: Vec<Result<Node, WireError>>,
    ranges: Vec<std::ops::Range<u32>>,
    compressed: Option<Block>,
    /// The block's first item that is not valid JSON (or not UTF-8).
    syntax_error: Option<WireError>,
}

/// Reads a body as [`crate::server::body::read_body`] does (limit, body timeout, errors), splitting
/// its `Nodes` items as they arrive and handing them to the pool; `keep_items` keeps their bytes for
/// the answer. The blocks still on the pool when the body has arrived are waited for by
/// [`ReadStreamed::decoded`], under the request deadline as the decoding of any body is.
pub(crate) async fn read_streamed(
    headers: &HeaderMap,
    body: Body,
    limits: (usize, Duration),
    evaluator: &Arc<Evaluator>,
    keep_items: bool,
) -> Result<ReadStreamed, BodyError> {
    let (limit, body_timeout) = limits;
    let mut sink = Splitting {
        splitter: ItemSplitter::new(BLOCK_BYTES),
        to_pool: ToPool {
            in_flight: Arc::new(Semaphore::new(BLOCKS_IN_FLIGHT)),
            done: Arc::new(Mutex::new(Vec::new())),
            spare: Arc::new(Mutex::new(Vec::new())),
            blocks: 0,
            evaluator: Arc::clone(evaluator),
            keep_items,
            waiting_for_pool: false,
            received: 0,
        },
    };
    if let Err(e) = read_into(headers, body, limit, body_timeout, &mut sink).await {
        if e.status == StatusCode::REQUEST_TIMEOUT && sink.to_pool.waiting_for_pool {
            // Not the client's doing: the read waited for the pool to decode the blocks before.
            return Err(BodyError {
                status: StatusCode::SERVICE_UNAVAILABLE,
                message: format!(
                    "the request body could not be read within the body timeout of {} (--body-timeout): the server \
                     was still decoding the nodes before, {} bytes in",
                    humantime::format_duration(body_timeout),
                    sink.to_pool.received
                ),
            });
        }
        return Err(e);
    }
    let Splitting { splitter, mut to_pool } = sink;
    let Split { skeleton, placeholders, last } = splitter.finish();
    to_pool.send(last).await;
    Ok(ReadStreamed { skeleton, placeholders, to_pool })
}

/// A streamed body that has arrived, its last blocks maybe still on the pool.
pub(crate) struct ReadStreamed {
    skeleton: Vec<u8>,
    placeholders: Placeholders,
    to_pool: ToPool,
}

impl ReadStreamed {
    /// Waits for the pool to finish the body's blocks.
    pub(crate) async fn decoded(self) -> Result<StreamedBody, BodyError> {
        let ReadStreamed { skeleton, placeholders, to_pool } = self;
        // Every block sent is done once all the permits are back.
        let all = u32::try_from(BLOCKS_IN_FLIGHT).unwrap_or(u32::MAX);
        let _all_back = to_pool.in_flight.acquire_many(all).await;
        let done = std::mem::take(&mut *to_pool.done.lock());
        let lost = || BodyError {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            message: "a block of the request's Nodes was not decoded (its decoding stopped)".to_string(),
        };
        if done.len() != to_pool.blocks {
            return Err(lost());
        }
        let (mut nodes, mut kept, mut items) = (Vec::with_capacity(placeholders.len()), Vec::new(), Vec::new());
        let mut syntax_error = None;
        for (b, block) in done.into_iter().enumerate() {
            let block = block.ok_or_else(lost)?;
            for range in block.ranges {
                items.push(ItemAt { block: b as u32, range });
            }
            nodes.extend(block.nodes);
            kept.extend(block.compressed);
            syntax_error = syntax_error.or(block.syntax_error);
        }
        if nodes.len() != placeholders.len() {
            return Err(lost());
        }
        let keep_items = to_pool.keep_items;
        Ok(StreamedBody {
            skeleton: Bytes::from(skeleton),
            archive: keep_items.then(|| Arc::new(ItemArchive::new(kept, items, placeholders.clone()))),
            predecoded: Predecoded::new(placeholders, nodes, syntax_error),
        })
    }
}

/// Decodes a block's items (errors at `Nodes.items[i]`, `i` the item's index in its array) and,
/// for /filter (`keep`), compresses its bytes; a /filter's nodes are decoded without their images.
fn process(block: &SealedBlock, keep: bool) -> BlockDone {
    let mut syntax_error = None;
    let mut decode = || -> Vec<Result<Node, WireError>> {
        block
            .items
            .iter()
            .map(|item| {
                let (decoded, syntax) = match std::str::from_utf8(&block.bytes[item.range.clone()]) {
                    Ok(text) => {
                        let decoded = decode_node(item.index, text);
                        // The whole body's parse would have refused it before decoding anything.
                        let syntax = decoded.is_err() && serde_json::from_str::<IgnoredAny>(text).is_err();
                        (decoded, syntax)
                    }
                    Err(e) => (Err(WireError::new(ItemPath(item.index).to_string(), format!("not UTF-8: {e}"))), true),
                };
                if let (true, None, Err(e)) = (syntax, &syntax_error, &decoded) {
                    syntax_error = Some(e.clone());
                }
                decoded
            })
            .collect()
    };
    let nodes = if keep { without_images(decode) } else { decode() };
    let ranges = block.items.iter().map(|i| i.range.start as u32..i.range.end as u32).collect();
    BlockDone { nodes, ranges, compressed: keep.then(|| Block::compress(&block.bytes)), syntax_error }
}

/// The sink that splits the body and hands sealed blocks to the pool.
struct Splitting {
    splitter: ItemSplitter,
    to_pool: ToPool,
}

/// Sends sealed blocks to the pool and collects what it makes of them.
struct ToPool {
    in_flight: Arc<Semaphore>,
    /// Block `b`'s result at `[b]`, filled in as the pool finishes them.
    done: Arc<Mutex<Vec<Option<BlockDone>>>>,
    /// Buffers of blocks the pool is done with, for the splitter to fill again.
    spare: Arc<Mutex<Vec<Vec<u8>>>>,
    blocks: usize,
    evaluator: Arc<Evaluator>,
    keep_items: bool,
    /// Whether the read is waiting for a permit (the pool is behind), and the bytes taken.
    waiting_for_pool: bool,
    received: usize,
}

impl ToPool {
    /// Hands `block` to the pool once fewer than [`BLOCKS_IN_FLIGHT`] are there.
    async fn send(&mut self, block: SealedBlock) {
        let b = self.blocks;
        self.blocks += 1;
        let (done, spare) = (Arc::clone(&self.done), Arc::clone(&self.spare));
        let keep = self.keep_items;
        self.waiting_for_pool = true;
        // The semaphore is never closed; were it, the block would be decoded without a permit.
        let permit = Arc::clone(&self.in_flight).acquire_owned().await.ok();
        self.waiting_for_pool = false;
        self.evaluator.detached(move || {
            let result = process(&block, keep);
            spare.lock().push(block.bytes);
            let mut done = done.lock();
            if done.len() <= b {
                done.resize_with(b + 1, || None);
            }
            done[b] = Some(result);
            drop(permit);
        });
    }
}

impl BodySink for Splitting {
    async fn take(&mut self, data: Bytes) {
        self.to_pool.received += data.len();
        for buffer in self.to_pool.spare.lock().drain(..) {
            self.splitter.reuse(buffer);
        }
        self.splitter.push(&data);
        drop(data);
        let sealed: Vec<SealedBlock> = self.splitter.take_sealed().collect();
        for block in sealed {
            self.to_pool.send(block).await;
        }
    }

    fn received(&self) -> usize {
        self.to_pool.received
    }
}
