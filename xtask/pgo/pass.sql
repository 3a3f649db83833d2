-- One pass of the PGO training run (see src/pgo.rs), run many times over setup.sql's tables.
-- What makes the server's internal temporary tables, in the proportions of an application's
-- and an admin tool's statements; then an explicit RHEAP table's hash and B-tree indexes.
SHOW FULL COLUMNS FROM orders;
SHOW FULL COLUMNS FROM people;
SHOW FULL COLUMNS FROM posts;
SHOW INDEX FROM orders;
SHOW INDEX FROM people;
SHOW INDEX FROM posts;
SHOW TABLE STATUS LIKE 'orders';
SHOW TABLE STATUS LIKE 'people';
SHOW TABLE STATUS LIKE 'posts';
SELECT COUNT(*) FROM information_schema.KEY_COLUMN_USAGE WHERE TABLE_SCHEMA = 'test';
SELECT g, COUNT(*) FROM orders GROUP BY g;
SELECT h, COUNT(*), SUM(d) FROM orders GROUP BY h;
SELECT e, g, MAX(dt) FROM orders GROUP BY e, g;
SELECT city, AVG(score) FROM people GROUP BY city;
SELECT tag, COUNT(*) FROM posts GROUP BY tag;
SELECT title, COUNT(*) FROM posts GROUP BY title;
SELECT DISTINCT h FROM orders;
SELECT DISTINCT g, e FROM orders;
SELECT DISTINCT city FROM people;
SELECT DISTINCT body FROM posts;
SELECT COUNT(*) FROM (SELECT g AS v FROM orders UNION SELECT h FROM orders) d;
SELECT COUNT(*) FROM (SELECT name AS v FROM people UNION SELECT city FROM people) d;
SELECT COUNT(*) FROM (SELECT title FROM posts UNION SELECT tag FROM posts) d;
SELECT * FROM (SELECT h, MAX(dt) m FROM orders GROUP BY h) x ORDER BY m LIMIT 5;
SELECT o.h, COUNT(DISTINCT p.city) FROM orders o JOIN people p ON p.id = o.id GROUP BY o.h;
INSERT INTO kv SELECT g, h, id FROM orders;
SELECT COUNT(*) FROM kv WHERE a = 5;
SELECT COUNT(*) FROM kv WHERE b BETWEEN 'name-1' AND 'name-3';
UPDATE kv SET c = c + 1 WHERE a < 10;
DELETE FROM kv WHERE a % 2 = 0;
DELETE FROM kv;
