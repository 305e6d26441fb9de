// Starts Swagger UI on this server's OpenAPI document (a file, not an inline script: the page's CSP allows none).
window.ui = window.SwaggerUIBundle({
  url: '/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  persistAuthorization: false,
  tryItOutEnabled: false,
  defaultModelsExpandDepth: 0,
  docExpansion: 'none',
  filter: true,
});
