DROP TABLE webhook_urls;
