//! A streamed `Nodes` body's items kept compressed until the /filter answer echoes them.
//!
//! The answer repeats every feasible node's bytes exactly as they came, so a 5,000-node request
//! holds its items until the answer is written: held as they arrived, they were the request's
//! largest allocation (50 MiB of a 52 MB body). Consecutive nodes of a cluster are near copies of
//! each other (the same label keys, managedFields, image names), so blocks of them compress several
//! times over with LZ4 (gen-cluster's 5,000 nodes: 6.5x at 64 KiB blocks), and decompress at GB/s
//! while the answer is written, one block at a time.

use std::io;
use std::ops::Range;
use std::sync::Arc;

use axum::body::Bytes;

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
    /// Item `g`'s placeholder is at `placeholders[g]` in the skeleton.
    placeholders: Arc<[usize]>,
}

impl ItemArchive {
    pub(crate) fn new(blocks: Vec<Block>, items: Vec<ItemAt>, placeholders: Arc<[usize]>) -> Self {
        ItemArchive { blocks, items, placeholders }
    }

    /// The item whose placeholder is at `offset` in the skeleton.
    pub(crate) fn item_at(&self, offset: usize) -> Option<u32> {
        let g = self.placeholders.binary_search(&offset).ok()?;
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

    #[test]
    fn items_come_back_exactly_from_any_block() {
        let blocks_text = [r#"{"a":1}{"bb":[2,2,2,2,2,2,2,2]}"#, r#"{"c":"ccccccccccccccccccccc"}"#];
        let blocks = blocks_text.iter().map(|t| Block::compress(t.as_bytes())).collect();
        let items = vec![
            ItemAt { block: 0, range: 0..7 },
            ItemAt { block: 0, range: 7..31 },
            ItemAt { block: 1, range: 0..29 },
        ];
        let archive = Arc::new(ItemArchive::new(blocks, items, Arc::from(vec![10, 12, 14])));
        assert_eq!((archive.item_at(12), archive.item_at(11)), (Some(1), None));
        assert_eq!(archive.len_of(1), 24);
        let mut reader = ArchiveReader::new(Arc::clone(&archive));
        let read: Vec<Bytes> = [2, 0, 1, 2].into_iter().map(|g| reader.item(g).unwrap()).collect();
        assert_eq!(read[0], blocks_text[1].as_bytes());
        assert_eq!(read[1], &blocks_text[0].as_bytes()[..7]);
        assert_eq!(read[2], &blocks_text[0].as_bytes()[7..]);
        assert_eq!(read[3], read[0]);
        assert!(reader.item(3).is_err(), "no such item");
    }
}
