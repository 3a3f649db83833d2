-- The PGO training run's tables (see src/pgo.rs): made once, in the `test` database of a
-- private server that loads the instrumented plugin with rheap_takeover=INTERNAL.
-- Rows come from the server's sequence engine; one statement per line, each ending with `;`.
CREATE TABLE orders (id INT PRIMARY KEY, g INT NOT NULL, h VARCHAR(40), d DECIMAL(10,2), dt DATETIME, e ENUM('a','b','c'), KEY (g), KEY (h, g)) CHARSET latin1 COMMENT 'latin1, a composite key';
CREATE TABLE people (id BIGINT PRIMARY KEY, name VARCHAR(60) NOT NULL, city CHAR(20), score DOUBLE, born DATE, UNIQUE KEY (name), KEY (city)) CHARSET utf8mb4;
CREATE TABLE posts (id INT PRIMARY KEY, title VARCHAR(100), body TEXT, tag VARCHAR(10), data BLOB, KEY (tag)) CHARSET utf8mb4;
INSERT INTO orders SELECT seq, seq % 37, CONCAT('name-', seq % 53), seq / 7, '2020-01-01' + INTERVAL seq MINUTE, ELT(1 + seq % 3, 'a', 'b', 'c') FROM seq_1_to_300;
INSERT INTO people SELECT seq, CONCAT('person ', seq), CONCAT('city ', seq % 17), seq * 1.5, '1970-01-01' + INTERVAL seq DAY FROM seq_1_to_250;
INSERT INTO posts SELECT seq, CONCAT('title ', seq % 41), REPEAT('lorem ', seq % 30), CONCAT('t', seq % 9), REPEAT('b', seq % 50) FROM seq_1_to_200;
CREATE TABLE kv (a INT, b VARCHAR(20), c INT, KEY USING HASH (a), KEY USING BTREE (b, c)) ENGINE=RHEAP;
