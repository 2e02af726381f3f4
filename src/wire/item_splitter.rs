//! Taking a request's `Nodes.items` out of its body while the body streams in, so a `Nodes` request
//! of thousands of nodes is never held whole: each item's bytes go into blocks that are decoded
//! (and, for /filter, compressed) as they fill, and what is left, the skeleton, is the body with
//! each item replaced by a one-byte placeholder (`0`).
//!
//! The skeleton is parsed as any body is ([`crate::wire::ExtenderArgs::decode`]): a placeholder is
//! known by its offset in the skeleton, so the item it stands for is found whichever key Go's
//! matching picks (`Nodes`, `nodes`, the last of two). The split follows the same keys: an array
//! under `items` (exactly, as [`crate::wire::raw_list`] reads it) of an object under a top-level key
//! equal to `Nodes` ASCII-case-insensitively. Nothing here validates JSON beyond finding where
//! values end; the skeleton's parse and each item's decode do, so a malformed body is still refused
//! (its error names the item, or the skeleton's line and column).

use std::ops::Range;
use std::sync::Arc;

/// One item taken out: its index in its array (the path `Nodes.items[i]`) and its bytes in the
/// block it went into.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitItem {
    pub index: usize,
    pub range: Range<usize>,
}

/// A block of consecutive items, sealed once it reached the block size at an item's end.
#[derive(Debug, Default)]
pub struct SealedBlock {
    pub bytes: Vec<u8>,
    pub items: Vec<SplitItem>,
}

/// The body once it has all been pushed: the skeleton, where its placeholders are, and the last,
/// unsealed block.
#[derive(Debug)]
pub struct Split {
    pub skeleton: Vec<u8>,
    pub placeholders: Placeholders,
    pub last: SealedBlock,
}

/// What stands for a taken-out item in the skeleton: one byte, a valid JSON value.
const PLACEHOLDER: u8 = b'0';

/// Where a skeleton's placeholders are: item `g` (in body order) at offset `[g]`.
#[derive(Debug, Clone)]
pub struct Placeholders(Arc<[usize]>);

impl Placeholders {
    /// How many items were taken out.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The item `text` stands for, when it is one of the placeholders of `skeleton`. Compared by
    /// address: `text` is a `RawValue` borrowed from the skeleton, or the bytes serde_json writes
    /// for one.
    pub fn item_of(&self, skeleton: &[u8], text: &[u8]) -> Option<usize> {
        if text != [PLACEHOLDER] {
            return None;
        }
        let offset = (text.as_ptr() as usize).checked_sub(skeleton.as_ptr() as usize)?;
        if offset >= skeleton.len() {
            return None;
        }
        self.0.binary_search(&offset).ok()
    }
}

/// What a container is to the split.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// The body's top-level object: its keys are read.
    Root,
    /// The object under a top-level `Nodes` key: its keys are read.
    List,
    /// The array under that object's `items`: its elements are taken out.
    Items,
    Other,
}

#[derive(Debug)]
struct Container {
    role: Role,
    is_object: bool,
    /// Objects: the next string is a key (after `{` or `,`).
    expecting_key: bool,
    /// Arrays: elements started so far.
    elements: usize,
}

/// The item being taken out.
#[derive(Debug)]
enum InItem {
    /// An object or array, nesting `depth` deep.
    Nested {
        depth: usize,
        in_string: bool,
        escaped: bool,
    },
    String {
        escaped: bool,
    },
    /// A number or literal, ended by the first delimiter (which is the skeleton's).
    Scalar,
}

/// Keys longer than this cannot be `Nodes` or `items`, even escaped (`\u004e...` is 6 bytes a letter).
const KEY_CAPTURE: usize = 64;

/// Splits a body pushed in pieces; see the module documentation.
#[derive(Debug)]
pub struct ItemSplitter {
    block_bytes: usize,
    skeleton: Vec<u8>,
    placeholders: Vec<usize>,
    /// The containers that matter (the top-level object, `Nodes`, its `items`) and the ones the
    /// split is inside of, down to the first that does not matter; below that only a count, so
    /// deep nesting costs nothing (the skeleton's parse refuses it).
    stack: Vec<Container>,
    /// Containers open below the last one on `stack`.
    deeper: usize,
    in_string: bool,
    escaped: bool,
    /// The raw bytes of a key being read (in a `Root` or `List` object), `None` when not reading one.
    key: Option<Vec<u8>>,
    /// The role the next value gets, set by the key before it.
    next_role: Role,
    item: Option<(InItem, usize, usize)>, // (state, index in its array, start in block)
    block: SealedBlock,
    sealed: Vec<SealedBlock>,
    /// Emptied block buffers handed back ([`ItemSplitter::reuse`]), taken before allocating.
    spare: Vec<Vec<u8>>,
}

impl ItemSplitter {
    /// A splitter sealing blocks at `block_bytes` (at the end of the item that reaches it).
    pub fn new(block_bytes: usize) -> Self {
        ItemSplitter {
            block_bytes,
            skeleton: Vec::new(),
            placeholders: Vec::new(),
            stack: Vec::new(),
            deeper: 0,
            in_string: false,
            escaped: false,
            key: None,
            next_role: Role::Other,
            item: None,
            block: SealedBlock::default(),
            sealed: Vec::new(),
            spare: Vec::new(),
        }
    }

    /// Hands back a sealed block's buffer once it has been read, for a later block: a buffer freed
    /// on another thread is not soon reused by the allocator of this one, and a body of hundreds of
    /// blocks then held most of them.
    pub fn reuse(&mut self, mut buffer: Vec<u8>) {
        buffer.clear();
        self.spare.push(buffer);
    }

    /// The blocks sealed since the last call.
    pub fn take_sealed(&mut self) -> std::vec::Drain<'_, SealedBlock> {
        self.sealed.drain(..)
    }

    /// Items taken out so far.
    pub fn items(&self) -> usize {
        self.placeholders.len()
    }

    /// The next piece of the body.
    pub fn push(&mut self, mut data: &[u8]) {
        while !data.is_empty() {
            let used = if self.item.is_some() { self.in_item(data) } else { self.outside(data) };
            data = &data[used..];
        }
    }

    /// Ends the body. An item still open (the body ended inside it) goes back into the skeleton,
    /// whose parse then reports where the body ended.
    pub fn finish(mut self) -> Split {
        if let Some((_, _, start)) = self.item.take() {
            let placeholder = self.placeholders.pop().unwrap_or(self.skeleton.len());
            self.skeleton.truncate(placeholder);
            self.skeleton.extend_from_slice(&self.block.bytes[start..]);
            self.block.bytes.truncate(start);
        }
        Split { skeleton: self.skeleton, placeholders: Placeholders(Arc::from(self.placeholders)), last: self.block }
    }

    /// Reads skeleton bytes until an item starts; returns how many it used.
    fn outside(&mut self, data: &[u8]) -> usize {
        for (i, &b) in data.iter().enumerate() {
            if self.in_string {
                self.skeleton.push(b);
                if self.escaped {
                    self.escaped = false;
                } else if b == b'\\' {
                    self.escaped = true;
                } else if b == b'"' {
                    self.in_string = false;
                    if let Some(key) = self.key.take() {
                        self.key_read(&key);
                    }
                    continue;
                }
                if let Some(key) = &mut self.key {
                    if key.len() < KEY_CAPTURE + 1 {
                        key.push(b);
                    }
                }
                continue;
            }
            if b.is_ascii_whitespace() {
                self.skeleton.push(b);
                continue;
            }
            let top = if self.deeper == 0 { self.stack.last_mut() } else { None };
            if top.as_ref().is_some_and(|c| c.role == Role::Items && !matches!(b, b',' | b']')) {
                self.start_item(b);
                return i + 1;
            }
            self.skeleton.push(b);
            match b {
                b'"' => {
                    self.in_string = true;
                    if let Some(top) = top {
                        if top.is_object && top.expecting_key {
                            top.expecting_key = false;
                            if matches!(top.role, Role::Root | Role::List) {
                                self.key = Some(Vec::new());
                            }
                            continue;
                        }
                    }
                    self.value_started();
                }
                b'{' | b'[' => {
                    let role = match (self.stack.is_empty() && self.deeper == 0, b, self.next_role) {
                        (true, b'{', _) => Role::Root,
                        (false, b'{', Role::List) => Role::List,
                        (false, b'[', Role::Items) => Role::Items,
                        _ => Role::Other,
                    };
                    self.value_started();
                    if role == Role::Other {
                        self.deeper += 1;
                    } else {
                        self.stack.push(Container {
                            role,
                            is_object: b == b'{',
                            expecting_key: b == b'{',
                            elements: 0,
                        });
                    }
                }
                b'}' | b']' => {
                    if self.deeper > 0 {
                        self.deeper -= 1;
                    } else {
                        self.stack.pop();
                    }
                }
                b',' => {
                    if let Some(top) = top {
                        top.expecting_key = top.is_object;
                    }
                }
                b':' => {}
                _ => self.value_started(),
            }
        }
        data.len()
    }

    /// A value (not a key) began in the current container: counts it, and it takes the role its
    /// key gave.
    fn value_started(&mut self) {
        if self.deeper == 0 {
            if let Some(top) = self.stack.last_mut() {
                top.elements += 1;
            }
        }
        self.next_role = Role::Other;
    }

    fn key_read(&mut self, raw: &[u8]) {
        let Some(top) = self.stack.last().filter(|_| self.deeper == 0) else { return };
        let key: std::borrow::Cow<'_, str> = if raw.len() > KEY_CAPTURE {
            return self.next_role = Role::Other;
        } else if raw.contains(&b'\\') {
            let mut quoted = Vec::with_capacity(raw.len() + 2);
            quoted.push(b'"');
            quoted.extend_from_slice(raw);
            quoted.push(b'"');
            match serde_json::from_slice::<String>(&quoted) {
                Ok(key) => key.into(),
                Err(_) => return self.next_role = Role::Other,
            }
        } else {
            match std::str::from_utf8(raw) {
                Ok(key) => key.into(),
                Err(_) => return self.next_role = Role::Other,
            }
        };
        self.next_role = match top.role {
            Role::Root if key.eq_ignore_ascii_case("Nodes") => Role::List,
            Role::List if key == "items" => Role::Items,
            _ => Role::Other,
        };
    }

    fn start_item(&mut self, first: u8) {
        let index = self.stack.last().map_or(0, |c| c.elements);
        self.value_started();
        self.placeholders.push(self.skeleton.len());
        self.skeleton.push(PLACEHOLDER);
        let state = match first {
            b'{' | b'[' => InItem::Nested { depth: 1, in_string: false, escaped: false },
            b'"' => InItem::String { escaped: false },
            _ => InItem::Scalar,
        };
        let start = self.block.bytes.len();
        self.block.bytes.push(first);
        self.item = Some((state, index, start));
        // A one-byte scalar (`0`) may already be complete; the next byte tells.
    }

    /// Reads item bytes until the item ends; returns how many it used (a scalar's delimiter is not
    /// used: it is the skeleton's).
    fn in_item(&mut self, data: &[u8]) -> usize {
        let Some((state, _, _)) = &mut self.item else { return 0 };
        let (used, ended) = match state {
            InItem::Nested { depth, in_string, escaped } => scan_nested(data, depth, in_string, escaped),
            InItem::String { escaped } => scan_string(data, escaped),
            InItem::Scalar => {
                match data.iter().position(|b| b.is_ascii_whitespace() || matches!(b, b',' | b']' | b'}')) {
                    Some(end) => {
                        self.block.bytes.extend_from_slice(&data[..end]);
                        self.end_item();
                        return end;
                    }
                    None => (data.len(), false),
                }
            }
        };
        self.block.bytes.extend_from_slice(&data[..used]);
        if ended {
            self.end_item();
        }
        used
    }

    fn end_item(&mut self) {
        let Some((_, index, start)) = self.item.take() else { return };
        self.block.items.push(SplitItem { index, range: start..self.block.bytes.len() });
        if self.block.bytes.len() >= self.block_bytes {
            let capacity = self.block_bytes + self.block_bytes / 4;
            let bytes = self.spare.pop().unwrap_or_else(|| Vec::with_capacity(capacity));
            let full = std::mem::replace(&mut self.block, SealedBlock { bytes, items: Vec::new() });
            self.sealed.push(full);
        }
    }
}

/// Scans an object or array item from inside it: (bytes used, whether it closed).
fn scan_nested(data: &[u8], depth: &mut usize, in_string: &mut bool, escaped: &mut bool) -> (usize, bool) {
    let mut i = 0;
    while i < data.len() {
        if *in_string {
            let (used, closed) = scan_string(&data[i..], escaped);
            i += used;
            if closed {
                *in_string = false;
            }
            continue;
        }
        match data[i] {
            b'"' => *in_string = true,
            b'{' | b'[' => *depth += 1,
            b'}' | b']' => {
                *depth -= 1;
                if *depth == 0 {
                    return (i + 1, true);
                }
            }
            _ => {}
        }
        i += 1;
    }
    (data.len(), false)
}

/// Scans string bytes after the opening quote: (bytes used, whether the closing quote was among
/// them). Long stretches without a quote or backslash are skipped with memchr.
fn scan_string(data: &[u8], escaped: &mut bool) -> (usize, bool) {
    let mut i = 0;
    if *escaped {
        if data.is_empty() {
            return (0, false);
        }
        *escaped = false;
        i = 1;
    }
    while let Some(at) = memchr::memchr2(b'"', b'\\', &data[i..]) {
        let at = i + at;
        if data[at] == b'"' {
            return (at + 1, true);
        }
        if at + 1 == data.len() {
            *escaped = true;
            return (data.len(), false);
        }
        i = at + 2;
    }
    (data.len(), false)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Splits `body` pushed in pieces of `piece` bytes: the skeleton and every item's text, in order.
    fn split(body: &str, piece: usize, block: usize) -> (String, Vec<(usize, String)>) {
        let mut splitter = ItemSplitter::new(block);
        let mut blocks = Vec::new();
        for chunk in body.as_bytes().chunks(piece.max(1)) {
            splitter.push(chunk);
            blocks.extend(splitter.take_sealed());
        }
        let Split { skeleton, placeholders, last } = splitter.finish();
        blocks.push(last);
        let items: Vec<(usize, String)> = blocks
            .iter()
            .flat_map(|b| {
                b.items.iter().map(|it| (it.index, String::from_utf8(b.bytes[it.range.clone()].to_vec()).unwrap()))
            })
            .collect();
        assert_eq!(placeholders.len(), items.len());
        for (g, &at) in placeholders.0.iter().enumerate() {
            assert_eq!(placeholders.item_of(&skeleton, &skeleton[at..at + 1]), Some(g), "a placeholder at {at}");
        }
        (String::from_utf8(skeleton).unwrap(), items)
    }

    #[test]
    fn takes_the_items_out_in_any_piece_size() {
        let body = r#"{"Pod":{"spec":{"items":[1]}},"Nodes":{"metadata":{"x":"}]"},"items":[ {"a":"b\"}{","c":[1,{}]} ,null,"s\\",-1.5e3,[]] },"NodeNames":null}"#;
        let want_items = vec![
            (0, r#"{"a":"b\"}{","c":[1,{}]}"#.to_string()),
            (1, "null".to_string()),
            (2, r#""s\\""#.to_string()),
            (3, "-1.5e3".to_string()),
            (4, "[]".to_string()),
        ];
        let want_skeleton =
            r#"{"Pod":{"spec":{"items":[1]}},"Nodes":{"metadata":{"x":"}]"},"items":[ 0 ,0,0,0,0] },"NodeNames":null}"#;
        for piece in [1, 2, 3, 7, 64, body.len()] {
            for block in [1, 16, 1 << 20] {
                let (skeleton, items) = split(body, piece, block);
                assert_eq!(skeleton, want_skeleton, "piece {piece} block {block}");
                assert_eq!(items, want_items, "piece {piece} block {block}");
            }
        }
    }

    #[test]
    fn follows_the_keys_the_decoder_reads() {
        // Top-level key any case, escaped too; `items` exactly; only the object under it.
        let cases = [
            (r#"{"nodes":{"items":[{}]}}"#, 1),
            (r#"{"NODES":{"items":[{},{}]},"Nodes":{"items":[{}]}}"#, 3),
            (r#"{"N\u006fdes":{"items":[{}]}}"#, 1),
            (r#"{"Nodes":{"Items":[{}]}}"#, 0),
            (r#"{"Nodes":[{"items":[{}]}]}"#, 0),
            (r#"{"Pod":{"Nodes":{"items":[{}]}}}"#, 0),
            (r#"{"Nodes":{"metadata":{"items":[{}]},"items":[]}}"#, 0),
            (r#"[{"Nodes":{"items":[{}]}}]"#, 0),
            // A second top-level value is split too: harmless, the skeleton's parse refuses it.
            (r#"{"Nodes":{"items":[{}]}} {"Nodes":{"items":[{}]}}"#, 2),
        ];
        for (body, taken) in cases {
            assert_eq!(split(body, 3, 8).1.len(), taken, "{body}");
        }
    }

    #[test]
    fn deep_nesting_outside_the_items_keeps_no_stack() {
        let deep = format!(r#"{{"x":{}{},"Nodes":{{"items":[{{}}]}}}}"#, "[".repeat(100_000), "]".repeat(100_000));
        let mut splitter = ItemSplitter::new(1 << 20);
        splitter.push(deep.as_bytes());
        assert!(splitter.stack.capacity() <= 4, "{} stack entries", splitter.stack.capacity());
        assert_eq!(splitter.items(), 1, "the items after it are still found");
    }

    #[test]
    fn an_item_left_open_goes_back_into_the_skeleton() {
        let body = r#"{"Nodes":{"items":[{"a":1},{"b":[2"#;
        let (skeleton, items) = split(body, 5, 1 << 20);
        assert_eq!(skeleton, r#"{"Nodes":{"items":[0,{"b":[2"#);
        assert_eq!(items, vec![(0, r#"{"a":1}"#.to_string())]);
    }

    #[test]
    fn blocks_seal_at_an_item_end_once_full() {
        let body = r#"{"Nodes":{"items":[{"a":"xxxxxxxx"},{"b":1},{"c":2}]}}"#;
        let mut splitter = ItemSplitter::new(16);
        splitter.push(body.as_bytes());
        let sealed: Vec<SealedBlock> = splitter.take_sealed().collect();
        assert_eq!(sealed.len(), 1, "the first item alone reaches 16 bytes");
        assert_eq!(sealed[0].items.len(), 1);
        let split = splitter.finish();
        assert_eq!(split.last.items.len(), 2);
        assert_eq!(split.placeholders.len(), 3);
    }

    /// Whatever the bytes (valid JSON or not) and however they are cut, putting each item back in
    /// place of its placeholder gives the body back: nothing is lost, moved or added.
    fn reassembled(body: &[u8], cuts: &[usize]) -> Vec<u8> {
        let mut splitter = ItemSplitter::new(16);
        let mut blocks = Vec::new();
        let mut at = 0;
        for &cut in cuts.iter().chain(std::iter::once(&body.len())) {
            let cut = cut.clamp(at, body.len());
            splitter.push(&body[at..cut]);
            blocks.extend(splitter.take_sealed());
            at = cut;
        }
        let Split { skeleton, placeholders, last } = splitter.finish();
        blocks.push(last);
        let items: Vec<&[u8]> = blocks.iter().flat_map(|b| b.items.iter().map(|i| &b.bytes[i.range.clone()])).collect();
        let mut out = Vec::new();
        let mut from = 0;
        for (&p, item) in placeholders.0.iter().zip(&items) {
            out.extend_from_slice(&skeleton[from..p]);
            out.extend_from_slice(item);
            from = p + 1;
        }
        out.extend_from_slice(&skeleton[from..]);
        out
    }

    proptest::proptest! {
        #[test]
        fn the_body_comes_back_whole(
            parts in proptest::collection::vec(
                proptest::sample::select(vec![
                    "{", "}", "[", "]", ",", ":", "\"", "\\", " ", "\n", "0", "-1.5", "null", "x",
                    "\"Nodes\":", "\"nodes\":", "\"items\":", "\"N\\u006fdes\":", "{\"Nodes\":{\"items\":[",
                ]),
                0..60,
            ),
            cuts in proptest::collection::vec(0usize..400, 0..8),
        ) {
            let body = parts.concat().into_bytes();
            let mut cuts = cuts;
            cuts.sort_unstable();
            proptest::prop_assert_eq!(reassembled(&body, &cuts), body);
        }
    }
}
