//! A streamed `Nodes` body's items kept compressed until the /filter answer echoes them.
//!
//! The answer repeats every feasible node's bytes exactly as they came, so a 5,000-node request
//! holds its items until the answer is written: held as they arrived, they were the request's
//! largest allocation (50 MiB of a 52 MB body). Consecutive nodes of a cluster are near copies of
//! each other (the same label keys, managedFields, image names), so blocks of them compress several
//! times over with LZ4 (gen-cluster's 5,000 nodes in 128 KiB blocks: 50.2 MiB to 6.6 MiB), and
//! decompress at GB/s while the answer is written, one block at a time.

use std::io;
use std::ops::Range;
use std::sync::Arc;

use axum::body::Bytes;

use crate::wire::item_splitter::Placeholders;

/// One compressed block and its length once decompressed.
#[derive(Debug)]
pub(crate) struct Block {
    compressed: Box<[u8]>,
    len: usize,
}

impl Block {
    pub(crate) fn compress(bytes: &[u8]) -> Block {
        Block { compressed: lz4_flex::block::compress(bytes).into_boxed_slice(), len: bytes.len() }
    }

    fn decompress(&self) -> io::Result<Vec<u8>> {
        lz4_flex::block::decompress(&self.compressed, self.len)
            .map_err(|e| io::Error::other(format!("decompressing a kept block of request nodes: {e}")))
    }
}

/// Where item `g` is: its block and its bytes in that block, decompressed.
#[derive(Debug, Clone)]
pub(crate) struct ItemAt {
    pub block: u32,
    pub range: Range<u32>,
}

/// The items of one streamed request, by item number (body order).
#[derive(Debug)]
pub(crate) struct ItemArchive {
    blocks: Vec<Block>,
    items: Vec<ItemAt>,
    placeholders: Placeholders,
}

impl ItemArchive {
    pub(crate) fn new(blocks: Vec<Block>, items: Vec<ItemAt>, placeholders: Placeholders) -> Self {
        ItemArchive { blocks, items, placeholders }
    }

    /// The item `text` stands for, when it is one of the placeholders of `skeleton`.
    pub(crate) fn item_of(&self, skeleton: &[u8], text: &[u8]) -> Option<u32> {
        let g = self.placeholders.item_of(skeleton, text)?;
        (g < self.items.len()).then_some(g as u32)
    }

    /// Item `g`'s length.
    pub(crate) fn len_of(&self, g: u32) -> usize {
        self.items.get(g as usize).map_or(0, |at| (at.range.end - at.range.start) as usize)
    }
}

/// Reads items out of an archive, decompressing each block once when items are read in order.
#[derive(Debug)]
pub(crate) struct ArchiveReader {
    archive: Arc<ItemArchive>,
    open: Option<(u32, Bytes)>,
}

impl ArchiveReader {
    pub(crate) fn new(archive: Arc<ItemArchive>) -> Self {
        ArchiveReader { archive, open: None }
    }

    /// Item `g`'s bytes, exactly as they came.
    pub(crate) fn item(&mut self, g: u32) -> io::Result<Bytes> {
        let at =
            self.archive.items.get(g as usize).cloned().ok_or_else(|| io::Error::other(format!("no kept item {g}")))?;
        let block = match &self.open {
            Some((b, bytes)) if *b == at.block => bytes.clone(),
            _ => {
                let block =
                    self.archive.blocks.get(at.block as usize).ok_or_else(|| io::Error::other("no kept block"))?;
                let bytes = Bytes::from(block.decompress()?);
                self.open = Some((at.block, bytes.clone()));
                bytes
            }
        };
        let range = at.range.start as usize..at.range.end as usize;
        if range.end > block.len() {
            return Err(io::Error::other(format!("kept item {g} is past its block's end")));
        }
        Ok(block.slice(range))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::item_splitter::{ItemSplitter, Split};

    #[test]
    fn items_come_back_exactly_from_any_block() {
        let texts = [r#"{"a":1}"#, r#"{"bb":[2,2,2,2,2,2,2,2]}"#, r#"{"c":"ccccccccccccccccccccc"}"#];
        let body = format!(r#"{{"Nodes":{{"items":[{}]}}}}"#, texts.join(","));
        let mut splitter = ItemSplitter::new(31); // the first two items (31 bytes) fill a block
        splitter.push(body.as_bytes());
        let mut sealed: Vec<_> = splitter.take_sealed().collect();
        let Split { skeleton, placeholders, last } = splitter.finish();
        sealed.push(last);
        assert_eq!(sealed.len(), 2);
        let items = sealed
            .iter()
            .enumerate()
            .flat_map(|(b, block)| {
                block
                    .items
                    .iter()
                    .map(move |i| ItemAt { block: b as u32, range: i.range.start as u32..i.range.end as u32 })
            })
            .collect();
        let blocks = sealed.iter().map(|b| Block::compress(&b.bytes)).collect();
        let archive = Arc::new(ItemArchive::new(blocks, items, placeholders));
        let at = |g: usize| skeleton.iter().enumerate().filter(|(_, &c)| c == b'0').nth(g).map(|(i, _)| i).unwrap();
        assert_eq!(archive.item_of(&skeleton, &skeleton[at(1)..at(1) + 1]), Some(1));
        assert_eq!(archive.item_of(&skeleton, b"0"), None, "not inside the skeleton");
        assert_eq!(archive.len_of(1), texts[1].len());
        let mut reader = ArchiveReader::new(Arc::clone(&archive));
        for g in [2, 0, 1, 2] {
            assert_eq!(reader.item(g).unwrap(), texts[g as usize].as_bytes(), "item {g}");
        }
        assert!(reader.item(3).is_err(), "no such item");
    }
}
