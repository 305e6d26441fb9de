/** A small document with a $ref, so the page shows the schema resolved. */
export const PETSTORE = {
  openapi: '3.0.3',
  info: { title: 'Pet store', version: '1.2.0' },
  servers: [{ url: 'https://pets.example.com/v1' }],
  paths: {
    '/pets/{petId}': {
      get: {
        operationId: 'getPet',
        summary: 'Read one pet',
        tags: ['pets'],
        parameters: [
          { name: 'petId', in: 'path', required: true, schema: { type: 'integer' }, description: 'The pet number' },
          { name: 'verbose', in: 'query', schema: { type: 'boolean' } },
        ],
        responses: { '200': { description: 'ok', content: { 'application/json': { schema: { $ref: '#/components/schemas/Pet' } } } } },
      },
    },
    '/pets': {
      post: {
        operationId: 'createPet',
        summary: 'Add a pet',
        tags: ['pets'],
        requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/Pet' } } } },
        responses: { '201': { description: 'created' } },
      },
    },
  },
  components: { schemas: { Pet: { type: 'object', required: ['name'], properties: { name: { type: 'string', description: 'What the pet answers to' }, species: { type: 'string', enum: ['cat', 'dog'] } } } } },
};
