import { createRequire } from 'node:module';
import path from 'node:path';
import express, { type Router } from 'express';

/**
 * Browser pages that work with no internet: the GraphiQL playground on GET /graphql (when the browser
 * asks for HTML) and the Swagger UI reference on /docs. Every script and style comes from npm packages
 * installed with the service, never from a CDN.
 */
export interface OfflinePagesOptions {
  graphqlPath: string;
  streamPath: string;
  openapiJsonPath: string;
  docsPath: string;
}

const require = createRequire(import.meta.url);
const packageFile = (pkg: string, file: string) => path.join(path.dirname(require.resolve(`${pkg}/package.json`)), file);

const PLAYGROUND_ASSETS: Record<string, string> = {
  'react.js': packageFile('react', 'umd/react.production.min.js'),
  'react-dom.js': packageFile('react-dom', 'umd/react-dom.production.min.js'),
  'graphiql.js': packageFile('graphiql', 'graphiql.min.js'),
  'graphiql.css': packageFile('graphiql', 'graphiql.min.css'),
  'graphql-sse.js': packageFile('graphql-sse', 'umd/graphql-sse.min.js'),
};

const DOCS_ASSETS: Record<string, string> = {
  'swagger-ui.css': packageFile('swagger-ui-dist', 'swagger-ui.css'),
  'swagger-ui-bundle.js': packageFile('swagger-ui-dist', 'swagger-ui-bundle.js'),
};

const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
].join('; ');

function page(title: string, head: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
${head}
<style>html, body { height: 100%; margin: 0; } #root { height: 100vh; }</style>
</head>
<body>
${body}
</body>
</html>`;
}

/** GraphiQL with a fetcher that posts queries and mutations and streams subscriptions over graphql-sse. */
function playgroundScript(options: OfflinePagesOptions): string {
  return `(function () {
  var graphqlUrl = ${JSON.stringify(options.graphqlPath)};
  var streamUrl = ${JSON.stringify(options.streamPath)};
  function isSubscription(params, opts) {
    var ast = opts && opts.documentAST;
    if (ast) {
      var ops = ast.definitions.filter(function (d) { return d.kind === 'OperationDefinition'; });
      var op = ops.find(function (d) { return params.operationName ? d.name && d.name.value === params.operationName : true; }) || ops[0];
      return !!op && op.operation === 'subscription';
    }
    return /^\\s*subscription\\b/.test(params.query.replace(/#.*$/gm, ''));
  }
  function fetcher(params, opts) {
    var headers = Object.assign({}, opts && opts.headers);
    if (isSubscription(params, opts)) {
      var client = graphqlSse.createClient({ url: streamUrl, headers: headers, retryAttempts: 0 });
      var iterator = client.iterate(params);
      return { [Symbol.asyncIterator]: function () {
        return { next: function () { return iterator.next(); },
                 return: function () { client.dispose(); return iterator.return ? iterator.return() : Promise.resolve({ done: true }); } };
      } };
    }
    headers['content-type'] = 'application/json';
    headers['accept'] = 'application/graphql-response+json, application/json';
    return fetch(graphqlUrl, { method: 'POST', headers: headers, body: JSON.stringify(params) }).then(function (r) { return r.json(); });
  }
  var root = ReactDOM.createRoot(document.getElementById('root'));
  root.render(React.createElement(GraphiQL, {
    fetcher: fetcher,
    defaultHeaders: JSON.stringify({ 'x-api-key': '' }, null, 2),
    shouldPersistHeaders: true,
    defaultEditorToolsVisibility: 'headers',
    defaultQuery: '# Put your API key in the Headers pane below, then run:\\n{\\n  viewer { kind role organization { name } }\\n  collections(limit: 10) { readableId name status }\\n}\\n'
  }));
})();`;
}

function docsScript(options: OfflinePagesOptions): string {
  return `window.ui = SwaggerUIBundle({ url: ${JSON.stringify(options.openapiJsonPath)}, dom_id: '#root', deepLinking: true, persistAuthorization: true });`;
}

function serveAssets(router: Router, prefix: string, assets: Record<string, string>, script: string): void {
  router.get(`${prefix}/assets/:name`, (req, res, next) => {
    if (req.params.name === 'bootstrap.js') {
      res.type('application/javascript').setHeader('Cache-Control', 'no-cache');
      res.send(script);
      return;
    }
    const file = assets[req.params.name];
    if (!file) return next();
    res.sendFile(file, { maxAge: '7d', immutable: true });
  });
}

export function offlinePagesRouter(options: OfflinePagesOptions): Router {
  const router = express.Router();
  serveAssets(router, options.graphqlPath, PLAYGROUND_ASSETS, playgroundScript(options));
  serveAssets(router, options.docsPath, DOCS_ASSETS, docsScript(options));

  const assetUrl = (prefix: string, name: string) => `${prefix}/assets/${name}`;
  const playground = page(
    'Catchment GraphQL playground',
    `<link rel="stylesheet" href="${assetUrl(options.graphqlPath, 'graphiql.css')}">`,
    `<div id="root"></div>
${['react.js', 'react-dom.js', 'graphiql.js', 'graphql-sse.js', 'bootstrap.js'].map((name) => `<script src="${assetUrl(options.graphqlPath, name)}"></script>`).join('\n')}`,
  );
  const docs = page(
    'Catchment REST API reference',
    `<link rel="stylesheet" href="${assetUrl(options.docsPath, 'swagger-ui.css')}">`,
    `<div id="root"></div>
${['swagger-ui-bundle.js', 'bootstrap.js'].map((name) => `<script src="${assetUrl(options.docsPath, name)}"></script>`).join('\n')}`,
  );

  // GET /graphql serves the playground only to browsers; API clients fall through to Apollo.
  router.get(options.graphqlPath, (req, res, next) => {
    if (req.accepts(['application/json', 'application/graphql-response+json', 'text/html']) !== 'text/html') return next();
    res.setHeader('Content-Security-Policy', CSP);
    res.type('html').send(playground);
  });
  router.get(options.docsPath, (_req, res) => {
    res.setHeader('Content-Security-Policy', CSP);
    res.type('html').send(docs);
  });
  return router;
}
