import { defineCollection, z } from 'astro:content';
import { docsLoader } from '@astrojs/starlight/loaders';
import { docsSchema } from '@astrojs/starlight/schema';

export const collections = {
  docs: defineCollection({
    loader: docsLoader(),
    schema: docsSchema({
      extend: z.object({
        /** Syllabus concept ids this page teaches (for example `S1`, `I2`); checked by the coverage test. */
        concepts: z.array(z.string().regex(/^[SIVNETC]\d+$/)).default([]),
        /** Lab ids this lesson sends the learner to. */
        labs: z.array(z.string()).default([]),
      }),
    }),
  }),
};
