//! The pieces every page is made of: escaping, the page frame with its stylesheet, tables.
//! Plain server-rendered HTML: no script, nothing loaded from elsewhere.

use std::fmt::Write;

/// Text made safe for an HTML element's content or a quoted attribute.
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A query string value.
pub fn url_value(text: &str) -> String {
    form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

const STYLE: &str = "
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #1d1d1f; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.6em; }
nav a { margin-right: 1em; }
table { border-collapse: collapse; margin: .5em 0; }
th, td { border: 1px solid #d0d0d7; padding: .2em .5em; text-align: left; vertical-align: top; }
th { background: #f2f2f6; } tbody th { white-space: nowrap; }
td.num { text-align: right; }
.summary { font-weight: bold; }
.fit { background: #e3f6e3; } .fail { background: #fbe4e4; }
.deciding { background: #f4a9a9; font-weight: bold; }
.muted { color: #6e6e73; }
textarea { width: 100%; max-width: 60em; height: 18em; font-family: monospace; }
";

/// The whole page: title, navigation, body.
pub fn page(prefix: &str, title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{t} - predicate-extender</title>\
         <style>{STYLE}</style></head><body>\n<nav><a href=\"{p}/ui\">Pending pods</a><a href=\"{p}/ui/whatif\">What if</a></nav>\n\
         <h1>{t}</h1>\n{body}</body></html>\n",
        t = esc(title),
        p = esc(prefix),
    )
}

/// A table: a header row, then rows of cells already in HTML (`<td>...</td>` each).
pub fn table(id: &str, header: &[&str], rows: &[String]) -> String {
    let mut out = format!("<table id=\"{}\"><thead><tr>", esc(id));
    for h in header {
        let _ = write!(out, "<th>{}</th>", esc(h));
    }
    out.push_str("</tr></thead><tbody>\n");
    for r in rows {
        let _ = writeln!(out, "<tr>{r}</tr>");
    }
    out.push_str("</tbody></table>\n");
    out
}

/// A plain cell.
pub fn td(text: &str) -> String {
    format!("<td>{}</td>", esc(text))
}

/// A number cell.
pub fn num(n: impl std::fmt::Display) -> String {
    format!("<td class=\"num\">{n}</td>")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_cannot_become_markup() {
        assert_eq!(
            esc("<script>alert('x') & \"y\"</script>"),
            "&lt;script&gt;alert(&#39;x&#39;) &amp; &quot;y&quot;&lt;/script&gt;"
        );
        assert_eq!(url_value("a b&c=d/e"), "a+b%26c%3Dd%2Fe");
        assert!(page("/p<", "T&", "").contains("<title>T&amp; - predicate-extender</title>"));
        assert!(page("/p<", "T", "").contains("href=\"/p&lt;/ui\""));
    }
}
