//! A blog's schema, as WordPress and the ORMs lay one out (posts with LONGTEXT bodies of a
//! few kilobytes, terms and their taxonomy, the posts' terms, comments), seeded the same on
//! every server, and the statements its pages send whose internal temporary tables stock
//! 10.11 builds in Aria for their BLOB/TEXT/JSON columns or a unique constraint: what rheap
//! serves in Aria's place (`rheap_takeover_blob_tables`).

/// Posts, comments and terms.
const POSTS: u32 = 2000;
const COMMENTS: u32 = 12_000;
const TERMS: u32 = 200;
/// Authors of posts.
const AUTHORS: u32 = 25;
/// The tables, each named `blog_` and this.
const TABLES: [&str; 5] = [
    "posts",
    "terms",
    "term_taxonomy",
    "term_relationships",
    "comments",
];

/// Every statement that creates and fills the blog's tables, in order. Values come from each
/// row's number through fixed formulas: the same rows on every server.
pub fn load_sql() -> Vec<String> {
    let mut out: Vec<String> = TABLES
        .iter()
        .map(|t| format!("DROP TABLE IF EXISTS blog_{t}"))
        .collect();
    out.extend([
        "CREATE TABLE blog_posts (ID BIGINT UNSIGNED PRIMARY KEY, post_author INT NOT NULL, \
         post_date DATETIME NOT NULL, post_title TEXT NOT NULL, post_content LONGTEXT NOT NULL, \
         post_excerpt TEXT NOT NULL, post_status VARCHAR(20) NOT NULL, guid VARCHAR(255) NOT NULL, \
         KEY (post_author, post_date), KEY (post_date)) ENGINE=InnoDB"
            .to_string(),
        "CREATE TABLE blog_terms (term_id INT PRIMARY KEY, name VARCHAR(200) NOT NULL, \
         slug VARCHAR(200) NOT NULL) ENGINE=InnoDB"
            .to_string(),
        "CREATE TABLE blog_term_taxonomy (term_taxonomy_id INT PRIMARY KEY, term_id INT NOT NULL, \
         taxonomy VARCHAR(32) NOT NULL, description LONGTEXT NOT NULL, KEY (term_id)) ENGINE=InnoDB"
            .to_string(),
        "CREATE TABLE blog_term_relationships (object_id BIGINT UNSIGNED NOT NULL, \
         term_taxonomy_id INT NOT NULL, PRIMARY KEY (object_id, term_taxonomy_id), \
         KEY (term_taxonomy_id)) ENGINE=InnoDB"
            .to_string(),
        "CREATE TABLE blog_comments (comment_ID BIGINT UNSIGNED PRIMARY KEY, \
         comment_post_ID BIGINT UNSIGNED NOT NULL, comment_author TINYTEXT NOT NULL, \
         comment_date DATETIME NOT NULL, comment_content TEXT NOT NULL, \
         KEY (comment_post_ID)) ENGINE=InnoDB"
            .to_string(),
        // Bodies of 0.6 to 7 KB; titles that repeat (GROUP BY title finds groups).
        format!(
            "INSERT INTO blog_posts SELECT seq, 1 + seq % {AUTHORS}, \
             '2020-01-01' + INTERVAL (seq * 7919) % 2000000 MINUTE, \
             CONCAT(ELT(1 + seq % 6, 'Release notes', 'How we moved to the cloud', \
               'Ten tips for temporary tables', 'Weekly digest', 'Hello world', 'On indexes'), \
               ' ', seq % 40), \
             REPEAT(CONCAT('Paragraph ', seq % 97, ' of a post about databases and the web. '), \
               12 + (seq * 31) % 130), \
             CONCAT('An excerpt of post ', seq, ', about ', seq % 17, ' things.'), \
             IF(seq % 10 = 0, 'draft', 'publish'), \
             CONCAT('https://blog.example.com/?p=', seq) \
             FROM seq_1_to_{POSTS}"
        ),
        format!(
            "INSERT INTO blog_terms SELECT seq, CONCAT(ELT(1 + seq % 5, 'News', 'Tech', 'Life', \
             'Databases', 'Travel'), ' ', seq), CONCAT('term-', seq) FROM seq_1_to_{TERMS}"
        ),
        format!(
            "INSERT INTO blog_term_taxonomy SELECT seq, seq, IF(seq % 4 = 0, 'category', \
             'post_tag'), REPEAT(CONCAT('Posts about term ', seq, '. '), 3 + seq % 40) \
             FROM seq_1_to_{TERMS}"
        ),
        // Three to five terms a post.
        format!(
            "INSERT IGNORE INTO blog_term_relationships SELECT p.seq, 1 + (p.seq * k.seq * 37) % {TERMS} \
             FROM seq_1_to_{POSTS} p JOIN seq_1_to_5 k WHERE k.seq <= 3 + p.seq % 3"
        ),
        // Comments of 40 bytes to 1.5 KB.
        format!(
            "INSERT INTO blog_comments SELECT seq, 1 + (seq * 13) % {POSTS}, \
             ELT(1 + seq % 7, 'ann', 'Bob', 'carol', 'dave', 'erin', 'frank', 'grace'), \
             '2021-01-01' + INTERVAL seq * 17 MINUTE, \
             REPEAT(CONCAT('Comment ', seq % 211, ' says thanks. '), 1 + (seq * 7) % 60) \
             FROM seq_1_to_{COMMENTS}"
        ),
    ]);
    out.extend(TABLES.iter().map(|t| format!("ANALYZE TABLE blog_{t}")));
    out
}

/// The parameters an iteration's statements run with: four pages, authors or terms.
const PAGES: [u32; 4] = [3, 8, 14, 21];

/// Statements of one page each, for every page of [`PAGES`].
fn pages(statement: impl Fn(u32) -> String) -> Vec<String> {
    PAGES.iter().map(|&p| statement(p)).collect()
}

/// 1: a category page with the count of all its posts (WordPress's main query).
pub fn found_rows() -> Vec<String> {
    pages(|p| {
        format!(
            "SELECT SQL_CALC_FOUND_ROWS p.* FROM blog_posts p \
             JOIN blog_term_relationships r ON r.object_id = p.ID \
             WHERE r.term_taxonomy_id IN ({}, {}) AND p.post_status = 'publish' \
             GROUP BY p.ID ORDER BY p.post_date DESC, p.ID LIMIT 10",
            p,
            p + 40
        )
    })
}

/// 3: an ORM's `.distinct()` across a many-to-many: the posts of a tag, bodies and all.
pub fn distinct() -> Vec<String> {
    pages(|p| {
        format!(
            "SELECT DISTINCT p.ID, p.post_title, p.post_content FROM blog_posts p \
             JOIN blog_term_relationships r ON r.object_id = p.ID \
             WHERE r.term_taxonomy_id = {p}"
        )
    })
}

/// 4: a UNION of TEXT columns (an author's titles and the comments on a range of posts).
pub fn union() -> Vec<String> {
    pages(|p| {
        format!(
            "SELECT post_title FROM blog_posts WHERE post_author = {p} \
             UNION SELECT comment_content FROM blog_comments \
             WHERE comment_post_ID BETWEEN {} AND {}",
            p * 50,
            p * 50 + 15
        )
    })
}

/// 5: a page of 20 posts with each one's terms (GROUP_CONCAT's result is a BLOB).
pub fn group_concat() -> Vec<String> {
    pages(|p| {
        format!(
            "SELECT p.ID, p.post_title, GROUP_CONCAT(t.name ORDER BY t.name SEPARATOR ', ') \
             FROM blog_posts p JOIN blog_term_relationships r ON r.object_id = p.ID \
             JOIN blog_terms t ON t.term_id = r.term_taxonomy_id \
             WHERE p.ID BETWEEN {} AND {} GROUP BY p.ID ORDER BY p.post_date DESC, p.ID",
            p * 80,
            p * 80 + 19
        )
    })
}

/// 7: a JSON API's page: 20 posts as one JSON array, built in a derived table.
pub fn json_page() -> Vec<String> {
    pages(|p| {
        format!(
            "SELECT LENGTH(d.j), MD5(d.j) FROM (SELECT JSON_ARRAYAGG(JSON_OBJECT('id', ID, \
             'title', post_title, 'excerpt', post_excerpt, 'body', LEFT(post_content, 400)) \
             ORDER BY ID) AS j FROM blog_posts WHERE ID BETWEEN {} AND {}) d",
            p * 80,
            p * 80 + 19
        )
    })
}

/// 8: the latest comments of each post on a page (top-N per group over `c.*`).
pub fn top_comments() -> Vec<String> {
    pages(|p| {
        format!(
            "SELECT * FROM (SELECT c.*, ROW_NUMBER() OVER (PARTITION BY c.comment_post_ID \
             ORDER BY c.comment_date DESC, c.comment_ID) AS rn FROM blog_comments c \
             WHERE c.comment_post_ID BETWEEN {} AND {}) d WHERE rn <= 3",
            p * 60,
            p * 60 + 19
        )
    })
}

/// 9: COUNT(DISTINCT) over a TEXT.
pub fn count_distinct() -> Vec<String> {
    pages(|p| {
        format!(
            "SELECT COUNT(DISTINCT comment_content), COUNT(DISTINCT comment_author) \
             FROM blog_comments WHERE comment_post_ID BETWEEN {} AND {}",
            p * 60,
            p * 60 + 9
        )
    })
}

/// 10: GROUP BY a TEXT with aggregates (a unique constraint over the title).
pub fn group_by_text() -> Vec<String> {
    pages(|p| {
        format!(
            "SELECT post_title, COUNT(*), MAX(post_date) FROM blog_posts \
             WHERE post_author = {p} GROUP BY post_title"
        )
    })
}
